#!/usr/bin/env python3
"""The lab's power and error rates re-measured end to end, with command arms whose metric has a
known distribution: each sample is one run of a shell command that prints
800 · (1 + change) · exp(0.06 · z) tok/s for a standard normal z (the 6 % serving-level noise
of the study), so that everything the runner does (spawning, interleaving, looks, budgets) is
in the loop. The simulation in tests/ab/verdict_test.cpp measures the same targets in seconds;
this checks that the runner behaves as the simulation says.

    python3 scripts/command_noise_study.py MLALAB OUT_DIR [--runs-scale S]

writes OUT_DIR/study.md (the table) and OUT_DIR/study.json (every run's point verdicts).
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

# Each scenario: its true change, the round budget, and how many runs.
SCENARIOS = [
    ("none (A/A)", 0.0, 60, 20),
    ("+10 %", 0.10, 60, 10),
    ("+5 %", 0.05, 150, 10),
    ("-5 %", -0.05, 150, 10),
]

# One sample: two uniform draws from the kernel's entropy (awk's rand() right after srand()
# is not uniform enough: its first draws are biased by the seed), a Box-Muller normal, and
# the lognormal throughput.
SAMPLE_COMMAND = (
    "set -- $(od -An -N8 -tu4 /dev/urandom); awk -v a=$1 -v b=$2 -v change={change} "
    "'BEGIN {{ u = (a + 0.5) / 4294967296; v = (b + 0.5) / 4294967296; "
    "z = sqrt(-2 * log(u)) * cos(6.283185307179586 * v); "
    "printf \"throughput: %.6f tok/s\\n\", 800 * (1 + change) * exp(0.06 * z) }}'"
)

EXPERIMENT = """name = "noise-study"
hypothesis = "a command arm {label}"

[sweep]
concurrency = [1, 2, 4, 8, 16, 32, 64, 128, 256]

[measure]
max_minutes = 60

[decision]
min_effect_pct = 2.0
alpha = 0.05
min_rounds = 10
max_rounds = {max_rounds}
time_budget_s = 3600
correction = "holm"

[baseline]
command = "{baseline}"
metric = 'throughput: ([0-9.]+) tok/s'
better = "higher"
timeout_s = 10

[[variant]]
name = "variant"
command = "{variant}"
# An arm must differ from the baseline in its config, also when its change is 0.
env = {{ NOISE_STUDY_ARM = "variant" }}
"""


def toml_string(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def run_scenario(mlalab, label, change, max_rounds, runs, scratch):
    experiment = os.path.join(scratch, f"noise-{max_rounds}-{change}.toml")
    with open(experiment, "w") as f:
        f.write(EXPERIMENT.format(
            label=label, max_rounds=max_rounds,
            baseline=toml_string(SAMPLE_COMMAND.format(change=0.0)),
            variant=toml_string(SAMPLE_COMMAND.format(change=change))))
    results = []
    for run in range(runs):
        out = os.path.join(scratch, f"out-{max_rounds}-{change}-{run}")
        finished = subprocess.run([mlalab, "ab", experiment, "--out", out, "--seed",
                                   str(run + 1)], capture_output=True, text=True)
        paths = glob.glob(os.path.join(out, "*", "results.json"))
        if not paths:
            sys.exit(f"{label}: mlalab ab wrote no results (exit {finished.returncode}):\n"
                     + finished.stderr[-2000:])
        status = finished.returncode
        [path] = paths
        with open(path) as f:
            record = json.load(f)
        variant = record["analysis"]["variants"][0]
        points = variant["points"]
        results.append({
            "exit_status": status,
            "verdict": variant["verdict"],
            "point_verdicts": [p["verdict"] for p in points],
            "rounds": [p["change"]["paired_rounds"] for p in points],
            "covered": [p["change"]["lower_pct"] <= change * 100 <= p["change"]["upper_pct"]
                        for p in points],
        })
        print(f"{label}, run {run + 1}/{runs}: {variant['verdict']}", file=sys.stderr)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mlalab")
    parser.add_argument("out_dir")
    parser.add_argument("--runs-scale", type=float, default=1.0)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    rows = ["| true change | max_rounds | runs | points called FASTER/SLOWER | WITHIN_NOISE or "
            "SMALL_CHANGE points | overall verdicts | interval coverage | rounds per point |",
            "|---|---|---|---|---|---|---|---|"]
    everything = {}
    with tempfile.TemporaryDirectory(prefix="mlalab-noise-") as scratch:
        for label, change, max_rounds, runs in SCENARIOS:
            runs = max(1, round(runs * args.runs_scale))
            results = run_scenario(args.mlalab, label, change, max_rounds, runs, scratch)
            everything[label] = results
            points = [v for r in results for v in r["point_verdicts"]]
            called = sum(v in ("FASTER", "SLOWER") for v in points)
            equivalent = sum(v in ("WITHIN_NOISE", "SMALL_CHANGE") for v in points)
            verdicts = collections.Counter(r["verdict"] for r in results)
            covered = [c for r in results for c in r["covered"]]
            rounds = [n for r in results for n in r["rounds"]]
            rows.append(
                f"| {label} | {max_rounds} | {runs} | {called} of {len(points)} "
                f"({100 * called / len(points):.0f} %) | {equivalent} | "
                + ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items()))
                + f" | {100 * sum(covered) / len(covered):.1f} % | {sum(rounds) / len(rounds):.0f} |")
    with open(os.path.join(args.out_dir, "study.json"), "w") as f:
        json.dump(everything, f, indent=1)
    with open(os.path.join(args.out_dir, "study.md"), "w") as f:
        f.write("\n".join(rows) + "\n")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
