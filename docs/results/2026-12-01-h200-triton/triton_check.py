import importlib.util, sys, time, math
sys.path.insert(0, "python/tests")
spec = importlib.util.spec_from_file_location("triton_decode", "python/mlalab/triton_decode.py")
td = importlib.util.module_from_spec(spec); sys.modules["triton_decode"] = td; spec.loader.exec_module(td)
import torch, triton
import problems
print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())
TC = td.TritonConfig
cases = [
    ("v3", [1, 64, 65, 300], 16, 64, False, TC()),
    ("v4", [0, 129, 40], 20, 1, True, TC(block_n=32, target_ctas=64)),
    ("v3", [17, 0, 200], 32, 16, True, TC(block_h=32, target_ctas=1)),
    ("v3", [4096] * 4, 16, 64, False, TC(num_warps=8)),
    ("v4", [1, 5000], 128, 64, True, TC(num_stages=3)),
]
failures = 0
for layout, lengths, heads, page, sinks, cfg in cases:
    p = problems.make_problem(layout, lengths, heads, page, seed=9, sinks=sinks).to("cuda")
    out, lse = problems.poisoned_outputs(p)
    td.mla_decode_triton(p.q, p.kv_cache, p.block_table, p.seq_lens, p.softmax_scale, p.sinks,
                         out=out, lse=lse, config=cfg, max_context=max(lengths))
    torch.cuda.synchronize()
    try:
        problems.assert_matches(out, lse, p); print("ok  ", layout, lengths, heads, page, sinks, cfg.name)
    except AssertionError as e:
        failures += 1; print("FAIL", layout, lengths, heads, page, sinks, cfg.name, e)
print("smem (compiled split-attention kernel), limit 101,376 B (consumer Blackwell):")
for layout in ("v4", "v3"):
    for n in (16, 32):
        for w in (4, 8):
            for s in (2, 3):
                j = td.judge(TC(block_n=n, num_warps=w, num_stages=s), layout, smem_limit=101376)
                print(f"  {layout} {j.config.name:32s} {j.smem_bytes:>8,} B  {'fits' if j.feasible else j.reason}")
print("timing (triton.testing.do_bench_cudagraph, ms), V4 H16 L4096 page 64, one KV copy (L2-warm at small B):")
for batch in (1, 64):
    p = problems.make_problem("v4", [4096] * batch, 16, 64, seed=1).to("cuda")
    out, lse = problems.poisoned_outputs(p)
    for cfg in (TC(), TC(num_warps=8), TC(num_stages=3)):
        ws = torch.empty(td.workspace_floats(cfg, batch, 16, 4096), device="cuda")
        f = lambda: td.mla_decode_triton(p.q, p.kv_cache, p.block_table, p.seq_lens, p.softmax_scale, None, out=out, lse=lse, config=cfg, max_context=4096, workspace=ws)
        f(); torch.cuda.synchronize()
        print(f"  B={batch:3d} {cfg.name:32s} {triton.testing.do_bench_cudagraph(f) * 1000:8.1f} us")
sys.exit(1 if failures else 0)
