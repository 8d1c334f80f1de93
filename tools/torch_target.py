#!/usr/bin/python3
"""Run PyTorch's CPU operators on cases written by `aclnn-conform export` (spec abi.md,
"Out-of-process targets"), writing result.json and got.<out>.npy beside each case.json so that
`aclnn-conform score DIR` can score them.

    tools/torch_target.py DIR            (Debian: apt-get install python3-torch python3-numpy)

Operators:
  gelu_backward_v2               torch.ops.aten.gelu_backward(grad, self, approximate=...)
  softplus_backward              torch.ops.aten.softplus_backward(grad, self, beta, threshold)
  logit_grad                     torch.ops.aten.logit_backward(grad, self, eps)   (eps < 0 -> None)
  scaled_masked_softmax_backward torch._softmax_backward_data(grad, y, -1, dtype) * scale,
                                 then masked_fill(mask, 0)
  nsa_compress_grad              the reference written with unfold-style index tensors and index_add_

What is reported:
  - Invalid-input cases are CANN ABI semantics (NULL pointers, status codes) that a Python
    framework does not have: reported as {"status": null, "error": "unsupported: ..."}.
  - Where PyTorch 1.13 has no CPU kernel for a dtype (f16 for several of these ops), the usual
    user fallback is scored: compute in float32 and round the result to the output dtype. The
    case's result.json says so in "note".
"""
import json
import os
import sys

import numpy as np
import torch

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
      "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
      "u8": torch.uint8, "bool": torch.bool}
NP = {"f16": "<f2", "bf16": "<u2", "f32": "<f4", "f64": "<f8", "i8": "|i1", "i16": "<i2",
      "i32": "<i4", "i64": "<i8", "u8": "|u1", "bool": "|b1"}


def load_tensor(case_dir, desc):
    """The input view as a torch tensor: storage from the .npy, then shape/strides/offset."""
    arr = np.load(os.path.join(case_dir, desc["file"]))
    flat = np.ascontiguousarray(arr).reshape(-1)
    if desc["dtype"] == "bf16":
        storage = torch.from_numpy(flat.view(np.int16).copy()).view(torch.bfloat16)
    else:
        storage = torch.from_numpy(flat.copy())
    return torch.as_strided(storage, desc["shape"], desc["strides"], desc["offset"])


def scalar_value(p):
    bits, dt = int(p["bits"], 16), p["dtype"]
    if dt in ("f16", "bf16", "f32", "f64"):
        width = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}[dt]
        raw = np.array([bits], dtype="<u8").view(np.uint8)[:width].copy()
        if dt == "bf16":
            return float(torch.from_numpy(raw.view(np.int16)).view(torch.bfloat16)[0])
        return float(raw.view({"f16": "<f2", "f32": "<f4", "f64": "<f8"}[dt])[0])
    if dt == "bool":
        return float(bits != 0)
    width = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8}[dt]
    if dt != "u8" and bits >= 1 << (width - 1):
        bits -= 1 << width
    return float(bits)


def compute_dtype(*dts):
    return torch.float64 if torch.float64 in dts else torch.float32


def run_native_or_f32(fn, out_dtype, *tensors):
    """Run fn in the tensors' own dtypes; without a CPU kernel, in float32 (the user fallback)."""
    try:
        return fn(*tensors).to(out_dtype), None
    except RuntimeError as e:
        if "not implemented" not in str(e):
            raise
        ft = [t.to(torch.float32) if t.is_floating_point() else t for t in tensors]
        return fn(*ft).to(out_dtype), "computed in float32: " + str(e).splitlines()[0]


def op_gelu(case, t):
    out = case["tensors"]["gradInput"]
    approx = case["params"]["approximate"]
    return {"gradInput": run_native_or_f32(
        lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate=approx),
        DT[out["dtype"]], t["gradOutput"], t["self"])}


def op_softplus(case, t):
    out = case["tensors"]["gradInput"]
    g, x = t["gradOutput"], t["self"]
    cd = compute_dtype(g.dtype, x.dtype)
    beta, thr = scalar_value(case["params"]["beta"]), scalar_value(case["params"]["threshold"])
    xs = x if x.is_floating_point() else x.to(cd)
    return {"gradInput": run_native_or_f32(
        lambda a, b: torch.ops.aten.softplus_backward(a, b, beta, thr), DT[out["dtype"]], g, xs)}


def op_logit(case, t):
    eps = case["params"]["eps"]
    eps = float(eps) if not isinstance(eps, str) else float(eps.replace("inf", "Infinity"))
    eps_arg = None if eps < 0 or eps != eps else eps
    return {"out": run_native_or_f32(
        lambda g, x: torch.ops.aten.logit_backward(g, x, eps_arg),
        DT[case["tensors"]["out"]["dtype"]], t["dy"], t["x"])}


def op_softmax(case, t):
    scale = case["params"]["scale"]
    scale = float(scale) if not isinstance(scale, str) else float(scale.replace("inf", "Infinity"))
    scale = float(np.float32(scale))  # the attribute is used as f32 (ops.md §0.6)
    out_dt = DT[case["tensors"]["out"]["dtype"]]

    def f(g, y):
        r = torch._softmax_backward_data(g, y, -1, g.dtype) * scale
        return r.masked_fill(t["mask"], 0.0)
    return {"out": run_native_or_f32(f, out_dt, t["gradOutput"], t["y"])}


def op_nsa(case, t):
    p = case["params"]
    l, d = int(p["compressBlockSize"]), int(p["compressStride"])
    og, x, w = t["outputGrad"], t["input"], t["weight"]
    T = x.shape[0]
    cum = p["actSeqLen"] if p.get("actSeqLen") is not None else [T]
    starts, prev = [], 0
    for end in cum:
        s = end - prev
        nblk = (s - l) // d + 1 if s >= l else 0
        starts += [prev + i * d for i in range(nblk)]
        prev = end
    out_dt = x.dtype
    ogf, xf, wf = og.float(), x.float(), w.float()  # CPU has no f16 einsum/index_add_: user fallback
    idx = torch.tensor(starts, dtype=torch.long)[:, None] + torch.arange(l)[None, :]  # [C, l]
    if len(starts):
        gathered = xf[idx]                                     # [C, l, N, D]
        wgrad = torch.einsum("cnk,clnk->ln", ogf, gathered)
        contrib = (wf[None, :, :, None] * ogf[:, None, :, :]).reshape(-1, *xf.shape[1:])
        igrad = torch.zeros_like(xf).index_add_(0, idx.reshape(-1), contrib)
    else:
        wgrad, igrad = torch.zeros_like(wf), torch.zeros_like(xf)
    note = "computed in float32 (no CPU half kernels for einsum/index_add_)"
    return {"inputGradOut": (igrad.to(out_dt), note), "weightGradOut": (wgrad.to(out_dt), note)}


OPS = {"gelu_backward_v2": op_gelu, "softplus_backward": op_softplus, "logit_grad": op_logit,
       "scaled_masked_softmax_backward": op_softmax, "nsa_compress_grad": op_nsa}


def write_npy_atomic(path, arr):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.save(f, arr)
    os.replace(tmp, path)


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def run_case(case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    result = {"status": 0, "error": None}
    if case["expect"]["status"] != 0:
        result = {"status": None, "error": "unsupported: invalid-input cases are CANN ABI semantics"}
        write_json_atomic(os.path.join(case_dir, "result.json"), result)
        return "unsupported"
    tensors = {name: load_tensor(case_dir, d) for name, d in case["tensors"].items()
               if not d.get("null") and not d.get("output")}
    try:
        outs = OPS[case["op"]](case, tensors)
    except (RuntimeError, TypeError, ValueError) as e:
        result = {"status": None, "error": "unsupported: " + str(e).splitlines()[0]}
        write_json_atomic(os.path.join(case_dir, "result.json"), result)
        return "unsupported"
    notes = set()
    for name, (val, note) in outs.items():
        desc = case["tensors"][name]
        val = val.detach().contiguous().reshape(desc["shape"])
        if desc["dtype"] == "bf16":
            arr = val.view(torch.int16).numpy().view("<u2")
        else:
            arr = val.numpy().astype(NP[desc["dtype"]])
        write_npy_atomic(os.path.join(case_dir, "got.%s.npy" % name), arr)
        if note:
            notes.add(note)
    if notes:
        result["note"] = "; ".join(sorted(notes))
    write_json_atomic(os.path.join(case_dir, "result.json"), result)
    return "note" if notes else "ok"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write("usage: torch_target.py DIR (written by aclnn-conform export)\n")
        return 2
    counts = {}
    for root, _dirs, files in sorted(os.walk(sys.argv[1])):
        if "case.json" in files:
            kind = run_case(root)
            counts[kind] = counts.get(kind, 0) + 1
    print("torch %s: %s" % (torch.__version__, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
