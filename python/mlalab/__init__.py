"""mlalab: MLA decode attention (DeepSeek V3 and V4 cache layouts) for PyTorch.

    import mlalab
    out, lse = mlalab.mla_decode(q, kv_cache, block_table, seq_lens, softmax_scale)

CUDA tensors run mlalab's CUDA kernels on the current stream, CPU tensors its CPU backend.
For CUDA graphs, prepare a Dispatcher before capture and pass it to every call:

    dispatcher = mlalab.Dispatcher("v3", heads=128, page_size=64, tuning="table.json")
    dispatcher.prepare([(batch, max_context) for batch in (1, 8, 64)])
    with torch.cuda.graph(graph):
        mlalab.mla_decode(q, kv_cache, block_table, seq_lens, scale, out=out, lse=lse,
                          dispatcher=dispatcher, max_context=max_context)

The ops are torch.ops.mlalab.* (registered with TORCH_LIBRARY), so torch.compile and CUDA
graph capture see them as ops.
"""
from mlalab._ops import Dispatcher, VariantConfig, configs, mla_decode

__all__ = ["Dispatcher", "VariantConfig", "configs", "mla_decode"]
