"""The memory estimate of local-model jobs (hivebench.models.memory) against the real thing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hivebench.models.memory import memory_mb, model_config, parameters
from hivebench.models.precision import machine_dtype


def test_the_parameter_count_is_the_models(tiny_model: Path) -> None:
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert parameters(model_config(tiny_model)) == sum(p.numel() for p in model.parameters())


# Peaks are VmHWM (/proc/self/status), this process's own high-water mark: it starts at exec, and writing
# "5" to /proc/self/clear_refs starts it again from the current resident size. Not ru_maxrss: a child
# inherits its parent's (here pytest's, large once models are loaded) at exec, and clear_refs leaves it.
MEASURE = """
import ctypes, gc, json, sys
from hivebench.models import ChatRequest, Sampling
from hivebench.agents.llm.agent import decision_schema
from hivebench.models.local import TransformersBackend, load_model
path, rows, dtype, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
schema = decision_schema({"color": {"type": "integer", "minimum": 0, "maximum": 1}}, 32)
system = {"role": "system", "content": "Agents on a cycle pick colours. " * 10}
turn = "Round 1: you 0, neighbours 0 0. " * 10
asked = [ChatRequest((system, {"role": "user", "content": f"You are agent {v}. " + turn}), schema,
                     Sampling(1.0, 1.0, new), v) for v in range(rows)]
backend = TransformersBackend("m", path, dtype=dtype)
_, tokenizer, _ = load_model(path, 1, dtype)
prompts = [tokenizer.apply_chat_template(list(r.messages), add_generation_prompt=True, tokenize=False) for r in asked]
longest = max(len(ids) for ids in tokenizer(prompts, add_special_tokens=False)["input_ids"])
def hwm_mb():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024
loaded = hwm_mb()  # the peak since exec: loading the model
TransformersBackend("m", path, dtype=dtype).complete(asked[:1], lambda i, r: None)  # one-time allocations
gc.collect()
ctypes.CDLL("libc.so.6").malloc_trim(0)  # freed heap back to the system, so the batch's growth shows
open("/proc/self/clear_refs", "w").write("5")  # VmHWM starts again from the resident size now
backend.complete(asked, lambda i, r: None)
batch = hwm_mb()
print(json.dumps({"longest": longest, "peak_mb": max(loaded, batch), "batch_peak_mb": batch}))
"""
# Tokens decoded per row: the peak comes with pre-filling the prompts (about 230 tokens a row); each
# decoding step adds a token's keys and values and one query's scores, counted in the estimate too.
NEW_TOKENS = 8


def test_smollm2_peak_memory_is_within_its_estimate(smollm2: Path) -> None:
    """A real batch's peak resident memory, in a process of its own, at 4 and at 48 rows: under the
    estimate; and what 44 more rows add to the peak of the batch (measured after the model is
    loaded and one warm-up row has run) not wildly below what the estimate adds for them. That growth
    leaves out what a process holds whatever its batch (libraries, allocator arenas, thread pools,
    loading the weights, the CPU kernels' first-call workspaces: without the warm-up, on a CPU with AMX,
    4 rows peaked 800 MB over the loaded model and 48 rows only 25 to 90 MB more), which varies with the
    machine, so the bound does not. The estimate is conservative: the KV cache's
    transient copies and float32 attention scores are counted in full (measured on a 2-core AMD EPYC
    in float32, prompts of 233 tokens: batch peaks 1.11 and 1.99 GB, growth 0.88 GB; estimates 2.4 and
    3.8 GB, growth 1.3 GB). In the precision `dtype: auto` picks for this CPU: bfloat16 is emulated,
    several times slower, where the CPU has no bf16 instructions."""
    dtype = machine_dtype()
    batch_peaks, estimates = [], []
    for rows in (4, 48):
        command = [sys.executable, "-c", MEASURE, str(smollm2), str(rows), dtype, str(NEW_TOKENS)]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        measured = json.loads(out.stdout.splitlines()[-1])
        estimate = memory_mb(model_config(smollm2), dtype, rows, measured["longest"] + NEW_TOKENS, keeps_states=False)
        assert measured["peak_mb"] <= estimate, (rows, measured, estimate)
        batch_peaks.append(measured["batch_peak_mb"])
        estimates.append(estimate)
    growth, estimated_growth = batch_peaks[1] - batch_peaks[0], estimates[1] - estimates[0]
    assert 0 < growth <= estimated_growth <= 3.5 * growth, (batch_peaks, estimates)
