"""The probe pipeline: extract (cached) features for train and test, fit one probe per
(category, stage, layer), write the outputs."""

from __future__ import annotations

import hashlib
import logging
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import vocalgrad
from analysis.cli_options import ordered_subset

from .cache import FeatureCache, FeatureKey, fingerprint_digest
from .data import PROBE_SPLITS, ClipSet, load_clips
from .mel import MEL_SETTINGS, mel_feature
from .pooling import N_SEGMENTS

log = logging.getLogger("vocalgrad")

__all__ = ["STAGES", "LazyFeatures", "ModelSide", "data_categories", "extract_each", "extract_features", "fill_cache",
           "fit_cached", "fit_probes", "log_mel_cache", "model_config", "model_identity", "parse_layers", "parse_stages",
           "prepare_run", "progress_bar", "resolve_probe_device", "run_probe", "short_name", "source_id",
           "write_outputs"]

#: Feature stages, from the waveform to the LM's answer position (benchmark.md §10).
STAGES: tuple[str, ...] = ("mel", "pre_lm", "lm_audio", "lm_text")
LAYERED_STAGES: tuple[str, ...] = ("lm_audio", "lm_text", "encoder")
#: Clips per write of the mel stage.
MEL_CHUNK = 64


def parse_stages(spec: str | Sequence[str]) -> list[str]:
    """``"mel,lm_text"`` or a list -> validated stage names in pipeline order."""
    return ordered_subset(spec, STAGES, "stage")


def parse_layers(spec: str | Sequence[int], n_layers: int) -> list[int]:
    """``"all"`` (layers 1..N), ``"1,10,25"`` or a list -> sorted layer numbers.

    Layer 0 is the LM's input embedding (allowed when asked for); layer ``l`` is the output of
    decoder layer ``l``.
    """
    if isinstance(spec, str):
        if spec.strip().lower() == "all":
            return list(range(1, n_layers + 1))
        try:
            values = [int(x) for x in spec.split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"--layers must be 'all' or comma-separated integers, got {spec!r}") from None
    else:
        values = [int(x) for x in spec]
    bad = [v for v in values if not 0 <= v <= n_layers]
    if bad or not values:
        raise ValueError(f"layer(s) {bad or values} out of range: the model has {n_layers} LM layers (0..{n_layers})")
    return sorted(set(values))


def data_categories(data: str) -> list[str]:
    """Categories with a test config in a local Hub folder (all nine for a repo id)."""
    folder = Path(data).expanduser()
    if not folder.is_dir():
        return list(vocalgrad.CATEGORY_NAMES)
    found = [c for c in vocalgrad.CATEGORY_NAMES if any((folder / c).glob("test-*.parquet"))]
    if not found:
        raise FileNotFoundError(f"{folder}: no category configs (<category>/test-*.parquet); build it with "
                                f"`vocalgrad hub TEST_RENDER TRAIN_RENDER --out HUB`")
    return found


def source_id(data: str) -> str:
    """The data argument as recorded in a cache fingerprint: a resolved path if it exists, else as given."""
    p = Path(data).expanduser()
    return str(p.resolve()) if p.exists() else str(data)


def _adapter_identity(adapter: str) -> str:
    """Path and weights digest of a peft adapter folder (retraining changes the cache key)."""
    p = Path(adapter).expanduser()
    weights = p / "adapter_model.safetensors"
    if not weights.is_file():
        raise FileNotFoundError(f"--adapter {adapter}: no adapter_model.safetensors (a peft adapter folder, "
                                f"e.g. RUN/adapter of `vocalgrad finetune`)")
    return f"{p.resolve()}#{hashlib.sha1(weights.read_bytes()).hexdigest()[:12]}"


def model_identity(model: Any) -> tuple[str, str]:
    """(display name, identity string) of a model argument."""
    if not isinstance(model, (str, Path)):
        name = getattr(getattr(model, "config", None), "_name_or_path", None) or type(model).__name__
        return str(name), f"object:{name}"
    p = Path(model).expanduser()
    if p.is_dir():
        cfg = p / "config.json"
        digest = hashlib.sha1(cfg.read_bytes()).hexdigest()[:12] if cfg.is_file() else "noconfig"
        return str(model), f"{p.resolve()}#{digest}"
    return str(model), str(model)


def progress_bar(total: int, initial: int, desc: str, enabled: bool, unit: str = "clip"):
    """A tqdm bar on stderr that disappears when done (``enabled=False``: silent)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit=unit, disable=not enabled,
                file=sys.stderr, leave=False)


def fill_cache(writer, n: int, step: int, desc: str, progress: bool,
               compute: Callable[[list[int]], dict[FeatureKey, np.ndarray]]) -> int:
    """Write ``compute(indices)`` for clips ``writer.start .. n - 1``, ``step`` at a time, under a bar.

    Returns the number of clips computed; closes the writer.
    """
    done = 0
    with progress_bar(n, writer.start, desc, progress) as bar:
        for start in range(writer.start, n, step):
            idx = list(range(start, min(n, start + step)))
            writer.write(compute(idx))
            bar.update(len(idx))
            done += len(idx)
    writer.close()
    return done


def extract_features(clips: ClipSet, *, mel_cache: FeatureCache | None, model_cache: FeatureCache | None,
                     model_stages: Sequence[str] = (), layers: Sequence[int] = (),
                     get_model: Callable[[], Any] | None = None, batch_size: int = 8,
                     progress: bool = True) -> dict[str, int]:
    """Compute and cache the features of one :class:`ClipSet` that are not cached yet.

    Returns
    -------
    dict
        Clips computed per producer (``{"mel": n, "model": n}``); 0 when all came from the cache.
    """
    digest, n = clips.ids_digest, len(clips)
    done = {"mel": 0, "model": 0}
    if mel_cache is not None:
        key = FeatureKey("mel", None, clips.split, clips.category)
        if not mel_cache.has(key, digest):
            w = mel_cache.writer([key], n, digest)
            done["mel"] = fill_cache(w, n, MEL_CHUNK, f"mel {clips.split}/{clips.category}", progress,
                                     lambda idx: {key: np.stack([mel_feature(*clips.audio(i)) for i in idx])})
    if model_cache is not None and model_stages:
        wanted = [FeatureKey(s, None if s == "pre_lm" else layer, clips.split, clips.category)
                  for s in model_stages for layer in ([None] if s == "pre_lm" else layers)]
        missing = [k for k in wanted if not model_cache.has(k, digest)]
        if missing:
            if get_model is None:
                raise ValueError("model stages requested but no model given (--model)")
            w = model_cache.writer(missing, n, digest)
            mf = get_model()
            pairs = [(k.stage, k.layer) for k in w.keys]

            def compute(idx):
                feats = mf.features([clips.prompt] * len(idx), [clips.audio(i) for i in idx], wanted=pairs,
                                    ids=[clips.ids[i] for i in idx])
                return {k: feats[(k.stage, k.layer)] for k in w.keys}

            done["model"] = fill_cache(w, n, batch_size, f"model {clips.split}/{clips.category}", progress, compute)
    return done


# ----------------------------------------------------------------------------- steps shared with positions.py
def prepare_run(data: str, categories: Sequence[str] | None, out) -> tuple[list[str], Path]:
    """Canonical category names (default: those in the data) and the created output folder."""
    cats = [vocalgrad.category(c).name for c in (categories or data_categories(data))]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return cats, out


def model_config(model: Any, trust_remote_code: bool):
    """The transformers config of a model argument (path/repo id, or a loaded model)."""
    if isinstance(model, (str, Path)):
        import transformers

        return transformers.AutoConfig.from_pretrained(str(model), trust_remote_code=trust_remote_code)
    return model.config


def short_name(model_name: Any) -> str:
    """Last path component of a model name (cache tags, figure titles)."""
    return Path(str(model_name).rstrip("/")).name


class LazyFeatures:
    """A feature extractor built on first call (a fully cached run never loads the model)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self.loaded: Any = None

    def __call__(self) -> Any:
        if self.loaded is None:
            self.loaded = self._build()
        return self.loaded


def extract_each(data: str, cats: Sequence[str], extract: Callable[[ClipSet], None]) -> dict[tuple[str, str], ClipSet]:
    """Load every (split, category) :class:`ClipSet` in turn and ``extract`` it before loading the next."""
    clipsets: dict[tuple[str, str], ClipSet] = {}
    for cat in cats:
        for split in PROBE_SPLITS:
            clips = load_clips(data, split, cat)
            clipsets[(split, cat)] = clips
            extract(clips)
    return clipsets


def fit_cached(cache: FeatureCache, stage: str, layer: int | None, cat: str,
               clipsets: dict[tuple[str, str], ClipSet], *, epochs: int, device: str):
    """Train one probe on the cached train features of (stage, layer, category) and score it on test."""
    from .trainer import train_probe

    mats = {}
    for split in PROBE_SPLITS:
        cs = clipsets[(split, cat)]
        mats[split] = (cache.load(FeatureKey(stage, layer, split, cat), cs.ids_digest), cs.labels)
    return train_probe(mats["train"][0], mats["train"][1], mats["test"][0], mats["test"][1],
                       epochs=epochs, device=device)


def run_probe(*, data: str, out, model: Any = None, processor: Any = None,
              categories: Sequence[str] | None = None, stages: str | Sequence[str] = STAGES,
              layers: str | Sequence[int] = "all", device: str = "auto", dtype: str = "auto",
              batch_size: int = 8, audio_first: bool = False, system_prompt: str | None = None,
              model_class: str | None = None, trust_remote_code: bool = False, cache_dir=None,
              probe_device: str | None = None, epochs: int = 200, plots: bool = True,
              progress: bool = True, adapter: str | None = None) -> dict[str, Any]:
    """Run ``vocalgrad probe``: features, probes, ``probe.csv`` / ``probe.md`` / figures.

    Parameters
    ----------
    data : str
        Hub folder (with ``train`` and the category configs) or repo id.
    out : path-like
        Output folder; the feature cache goes to ``out/cache`` unless ``cache_dir`` is given.
    model : str or PreTrainedModel, optional
        Needed for the ``pre_lm``, ``lm_audio`` and ``lm_text`` stages.
    categories : list of str, optional
        Default: the categories present in a local folder (all nine for a repo id).
    stages : str or list of str
        Subset of :data:`STAGES`.
    layers : "all" or str or list of int
        LM layers for the layered stages (``all`` = 1..N).
    device, dtype, audio_first, system_prompt, model_class, trust_remote_code
        As the ``vocalgrad-hf`` model arguments (same prompt and message order as the harness).
    batch_size : int
        Clips per forward pass.
    probe_device : str, optional
        Device for probe training (default: the model's device, else cuda when available).
    epochs : int
        Probe epochs (paper: 200; lower only for quick looks).
    adapter : str, optional
        peft adapter folder put on the model (``vocalgrad finetune``'s ``RUN/adapter``); part of
        the feature-cache key.

    Returns
    -------
    dict
        ``rows`` (one dict per probe), ``files`` (written paths), ``computed`` (clips computed
        per producer), ``extract_seconds`` and ``probe_seconds``.
    """
    stage_list = parse_stages(stages)
    model_stages = _check_inputs(data, stage_list, model)
    cats, out = prepare_run(data, categories, out)
    cache_root = Path(cache_dir) if cache_dir else out / "cache"
    mel_cache = log_mel_cache(cache_root, data) if "mel" in stage_list else None
    side = ModelSide()
    if model_stages:
        side = _model_side(model, model_stages, layers, cache_root, data, dict(
            processor=processor, device=device, dtype=dtype, audio_first=audio_first, system_prompt=system_prompt,
            model_class=model_class, trust_remote_code=trust_remote_code, peft=adapter))
    if not progress:
        import datasets

        datasets.disable_progress_bars()
    t0 = time.perf_counter()
    computed = {"mel": 0, "model": 0}

    def extract(clips: ClipSet) -> None:
        got = extract_features(clips, mel_cache=mel_cache, model_cache=side.cache, model_stages=model_stages,
                               layers=side.layers, get_model=side.get_model, batch_size=batch_size,
                               progress=progress)
        for k in computed:
            computed[k] += got[k]

    clipsets = extract_each(data, cats, extract)
    extract_s = time.perf_counter() - t0
    probe_device = resolve_probe_device(probe_device, side.get_model)
    t1 = time.perf_counter()
    caches = {s: mel_cache if s == "mel" else side.cache for s in stage_list}
    rows = fit_probes(cats, stage_list, side, caches, clipsets, epochs=epochs, device=probe_device,
                       progress=progress)
    probe_s = time.perf_counter() - t1
    files = write_outputs(rows, out, model_name=side.name, data=data, epochs=epochs, plots=plots)
    return {"rows": rows, "files": files, "computed": computed, "extract_seconds": extract_s,
            "probe_seconds": probe_s}


# ----------------------------------------------------------------------------- steps of run_probe
def _check_inputs(data: str, stage_list: list[str], model: Any) -> list[str]:
    """Fail early on a missing local data folder or a model stage without a model; the model stages."""
    if str(data).startswith(("/", "./", "../", "~")) and not Path(data).expanduser().is_dir():
        raise FileNotFoundError(f"--data {data}: no such folder; build it with "
                                f"`vocalgrad hub TEST_RENDER TRAIN_RENDER --out HUB` or pass a Hub repo id")
    model_stages = [s for s in stage_list if s != "mel"]
    if model_stages and model is None:
        raise ValueError(f"stage(s) {', '.join(model_stages)} need --model; use --stages mel to probe "
                         f"the log-mel features alone")
    return model_stages


def log_mel_cache(cache_root: Path, data: str) -> FeatureCache:
    """The log-mel feature cache (keyed by the data and the mel settings)."""
    mel_fp = {"data": source_id(data), "mel": MEL_SETTINGS, "segments": N_SEGMENTS}
    return FeatureCache(cache_root, f"mel-{fingerprint_digest(mel_fp)[:8]}", mel_fp)


@dataclass
class ModelSide:
    """What the model stages share: their cache, layers, the model's display name and lazy loader."""

    cache: FeatureCache | None = None
    layers: list[int] = field(default_factory=list)
    name: str | None = None
    get_model: LazyFeatures | None = None


def _model_side(model: Any, model_stages: list[str], layers: str | Sequence[int], cache_root: Path, data: str,
                load: dict[str, Any]) -> ModelSide:
    """Layers, cache (keyed by data, model, prompt settings and adapter) and lazy loader of the model stages.

    ``load`` holds the :class:`ModelFeatures` keyword arguments.
    """
    name, identity = model_identity(model)
    cfg = model_config(model, load["trust_remote_code"])
    from .model_features import num_lm_layers

    layer_list = parse_layers(layers, num_lm_layers(cfg)) if any(
        s in LAYERED_STAGES for s in model_stages) else []
    fp = {"data": source_id(data), "model": identity, "dtype": load["dtype"], "audio_first": bool(load["audio_first"]),
          "system_prompt": load["system_prompt"], "prompt": "default", "segments": N_SEGMENTS}
    if load["peft"]:
        fp["adapter"] = _adapter_identity(load["peft"])
    cache = FeatureCache(cache_root, f"model-{short_name(name)}-{fingerprint_digest(fp)[:8]}", fp)

    def build():
        from .model_features import ModelFeatures

        return ModelFeatures(model, **load)

    return ModelSide(cache, layer_list, name, LazyFeatures(build))


def resolve_probe_device(requested: str | None, get_model: LazyFeatures | None) -> str:
    """Probe-training device: as asked, else the loaded model's, else cuda when available."""
    if requested is None:
        requested = get_model.loaded.device if get_model is not None and get_model.loaded is not None else "auto"
    if requested == "auto":
        import torch

        requested = "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def fit_probes(cats: list[str], stage_list: list[str], side: ModelSide, caches: dict[str, FeatureCache],
                clipsets: dict[tuple[str, str], ClipSet], *, epochs: int, device: str, progress: bool) -> list[dict]:
    """One probe per (category, stage, layer), under a progress bar; one row each."""
    rows: list[dict] = []
    jobs = [(c, s, layer) for c in cats for s in stage_list
            for layer in (side.layers if s in LAYERED_STAGES else [None])]
    with progress_bar(len(jobs), 0, "probes", progress, unit="probe") as bar:
        for cat, stage, layer in jobs:
            res = fit_cached(caches[stage], stage, layer, cat, clipsets, epochs=epochs, device=device)
            rows.append({"model": side.name or "", "category": cat, "stage": stage, "layer": layer,
                         **res.as_dict()})
            bar.update(1)
    return rows


def write_outputs(rows: list[dict], out: Path, *, model_name: str | None, data: str, epochs: int,
                   plots: bool, notes: list[str] | None = None) -> list[Path]:
    """``probe.csv``, ``probe.md`` and (with matplotlib) the stage and layer figures."""
    from .report import plot_layers, plot_stages, write_csv, write_markdown

    files = [write_csv(rows, out / "probe.csv"),
             write_markdown(rows, out / "probe.md", model=model_name, data=str(data), epochs=epochs, notes=notes)]
    if plots:
        try:
            title = short_name(model_name) if model_name else "log-mel"
            files.append(plot_stages(rows, out / "probe_stages.png", title=title))
            f = plot_layers(rows, out / "probe_layers.png", title=title)
            if f is not None:
                files.append(f)
        except ImportError as exc:
            log.warning("probe: plots skipped (%s); pip install 'vocalgrad[report]'", exc)
    return files
