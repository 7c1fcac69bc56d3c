"""What every transform shares: the contract, checked parameters, and the chunk/stitch machinery.

A transform is registered under the name a recipe's ``transform`` field uses and satisfies the
:class:`Transform` protocol::

    transform(x, sr, schedule, params, *, cache=None) -> Result

* ``x`` — mono float32 source at the processing rate, shape ``(n,)``;
* ``schedule`` — :class:`generation.schedule.Schedule` of the clip;
* ``params`` — an instance of the transform's :attr:`Transform.params_type`, a frozen
  :class:`Params` dataclass built and checked when the recipe loads (per-tier tables resolved,
  ``crossfade`` filled in from the recipe's ``[blocks]``), then bound to the clip with
  :meth:`Params.for_clip` (noise adds its seed there). The parameter class also owns the
  physical range of the transform's step values (a recipe's tier ends): :meth:`Params.value_range`,
  the direction of an increase clip :attr:`Params.increase_sign`, and :meth:`Params.check_tier`,
  which the recipe loader calls;
* ``cache`` — optional dict shared by all clips of one source; transforms may memoise work that
  depends only on the source in it (STFTs of context segments, IRs). Results never depend on it.

``Result.y`` has the transform's :attr:`Transform.output_dtype` (float32 or float64, listed in
:mod:`generation.transforms`); the render converts it to 16 bit.

The step-wise chunked family (speed, pitch, distortion, roughness, clarity) goes through
:func:`render_chunked`, the one implementation of benchmark.md §4a's chunk/context/cross-fade
mechanics; the sample-wise family (volume, noise, vibration, echo) expands the schedule with
:func:`per_sample`.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from vocalgrad import VocalGradError

from .. import registry

# ``Schedule`` in annotations is generation.schedule.Schedule, not imported: generation.schedule imports the
# recipe, which imports this module (annotations are not evaluated: ``from __future__ import annotations``).

__all__ = ["Result", "Params", "ChunkedParams", "ParamError", "ValueRange", "ClipKey", "Transform", "register",
           "TRANSFORMS",
           "rms", "match_rms", "rms_scale", "stitch", "stitch_joins", "render_chunked", "chunk_segments", "chunked",
           "per_sample"]


# ---- the contract ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Result:
    """A transformed clip: samples (the transform's ``output_dtype``) and the speech span's position in it."""

    y: np.ndarray
    onset: int
    offset: int


@dataclass(frozen=True)
class ClipKey:
    """Identity of one clip, for parameters that depend on it (:meth:`Params.for_clip`).

    ``clip_ref`` is the reference's clip id of the source (VCTK: the utterance id), the item id
    when the source has none.
    """

    item_id: str
    clip_ref: str
    trajectory: str
    tier: str
    direction: str


class ParamError(VocalGradError, ValueError):
    """A transform parameter is missing, unknown, of the wrong type or out of range.

    ``field`` names the parameter; the recipe loader adds the file and the category table.
    """

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ValueRange:
    """Allowed values of a quantity: ``low``..``high``, each end closed unless marked open.

    ``str()`` writes it the mathematical way: ``[-40, 40]``, ``(0, 24000]``.
    """

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, v: float) -> bool:
        above = v > self.low if self.low_open else v >= self.low
        below = v < self.high if self.high_open else v <= self.high
        return above and below

    def __str__(self) -> str:
        return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"


def check_number(value, name: str) -> float:
    """``value`` as a finite float, or :class:`ParamError` naming ``name`` (a string, a bool, NaN, inf)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParamError(name, f"must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ParamError(name, f"must be a finite number, got {value!r}")
    return float(value)


def _check_pair(pair, allowed: ValueRange, what: str, *, whole: bool = False) -> tuple[float, float]:
    """``[start, end]`` as two finite floats in ``allowed`` (whole numbers with ``whole``), or ParamError."""
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise ParamError("", f"must be [start, end], got {pair!r}")
    ends = []
    for name, v in zip(("start", "end"), pair):
        try:
            v = check_number(v, name)
        except ParamError as e:
            raise ParamError(name, f"{name} {e.message}") from None
        if v not in allowed:
            raise ParamError(name, f"{name} {v:g} is outside the {what} range {allowed}")
        if whole and v != round(v):
            raise ParamError(name, f"{name} {v:g} is not a whole number ({what})")
        ends.append(v)
    return ends[0], ends[1]


@dataclass(frozen=True, kw_only=True)
class Params:
    """Base of every transform's parameters: a frozen dataclass checked when it is built.

    Field annotations are the types a recipe may give (``int``, ``float``, ``str``,
    ``tuple[float, ...]``, ``dict[str, str]``); any field may instead be a per-tier table
    ``{low = ..., medium = ..., high = ...}``, resolved to the clip's tier. Fields with
    ``metadata={"engine": True}`` are filled by the engine, never by the recipe. Subclasses add
    range checks in :meth:`check` (raise :class:`ParamError` naming the field).
    """

    #: Co-varying schedule quantities (the category table's ``covary``) the transform reads.
    needs_covary: ClassVar[tuple[str, ...]] = ()
    #: What a step value (a tier end) is, with its unit, for messages.
    value_name: ClassVar[str] = "value"
    #: +1: an *increase* clip moves the step value up (louder, faster...); -1: down (a lower
    #: sample-and-hold rate or fewer bits is more distortion / roughness).
    increase_sign: ClassVar[int] = 1
    #: The effect rounds the step value to a whole number (bits): tier ends must be whole numbers.
    whole_values: ClassVar[bool] = False

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """Range checks of the subclass (none here)."""

    @classmethod
    def value_range(cls, sample_rate: int) -> ValueRange:
        """Physical range of a step value at the processing rate (any finite number here)."""
        return ValueRange()

    @classmethod
    def covary_range(cls, name: str, sample_rate: int) -> ValueRange:
        """Physical range of the co-varying quantity ``name`` (any finite number here)."""
        return ValueRange()

    @classmethod
    def value_level(cls, value: float, sample_rate: int) -> float:
        """What the effect makes of a step value (the value itself unless it rounds or clamps it)."""
        return value

    @classmethod
    def check_tier(cls, pair, *, sample_rate: int) -> tuple[float, float]:
        """Check a tier's ``[start, end]`` (of an increase clip); return it as floats.

        Both ends must be finite numbers in :meth:`value_range` (whole numbers when
        :attr:`whole_values`), and the end must differ from the start in the direction an
        increase clip is labelled with (:attr:`increase_sign`), also after the effect's own
        rounding (:meth:`value_level`): a flat tier would be labelled increase/decrease without
        any change.

        Raises
        ------
        ParamError
            ``field`` is ``start`` or ``end`` (or empty for the pair); the recipe loader adds file,
            category and tier.
        """
        start, end = _check_pair(pair, cls.value_range(sample_rate), cls.value_name, whole=cls.whole_values)
        way = "rise" if cls.increase_sign > 0 else "fall"
        if (end - start) * cls.increase_sign <= 0:
            raise ParamError("", f"{cls.value_name} must {way} from start to end in an increase clip, "
                                 f"got [{start:g}, {end:g}]")
        if cls.value_level(start, sample_rate) == cls.value_level(end, sample_rate):
            raise ParamError("", f"[{start:g}, {end:g}]: the effect rounds both ends to the same setting, "
                                 "so the clips would not change")
        return start, end

    @classmethod
    def check_covary(cls, name: str, pair, *, sample_rate: int) -> tuple[float, float]:
        """Check a co-varying quantity's ``[start, end]``: finite numbers in :meth:`covary_range`."""
        return _check_pair(pair, cls.covary_range(name, sample_rate), name)

    def for_clip(self, clip: ClipKey) -> Params:
        """These parameters for one clip (unchanged unless the effect depends on the clip)."""
        return self

    @classmethod
    def recipe_fields(cls) -> list[str]:
        """Names a recipe's category table may set."""
        return [f.name for f in dataclasses.fields(cls) if not f.metadata.get("engine")]

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, tier: str | None = None, tiers: Sequence[str] = (),
                   engine: Mapping[str, Any] | None = None) -> Params:
        """Build the parameters of ``tier`` from a recipe's category parameters.

        Parameters
        ----------
        table : mapping
            Parameter name -> value as written in the recipe (no ``transform``/``unit``/...).
        tier : str, optional
            Tier to resolve per-tier tables to; ``tiers`` are all tier names. Without a tier, no
            value may be a per-tier table (settings that do not vary by tier).
        engine : mapping
            Values of engine fields (``crossfade``); names the class lacks are ignored.

        Raises
        ------
        ParamError
            Unknown or missing name, wrong type, out of range.
        """
        engine = engine or {}
        known = cls.recipe_fields()
        for name in table:
            if name not in known:
                raise ParamError(name, f"unknown parameter; {cls.__name__} takes "
                                       f"{', '.join(known) if known else 'no parameters'}")
        hints = typing.get_type_hints(cls)
        values = {}
        for f in dataclasses.fields(cls):
            if f.metadata.get("engine"):
                if f.name in engine:
                    values[f.name] = engine[f.name]
                continue
            if f.name not in table:
                if f.default is dataclasses.MISSING:
                    raise ParamError(f.name, "missing")
                continue
            raw = table[f.name]
            if tier is not None and isinstance(raw, dict) and set(raw) == set(tiers):
                raw = raw[tier]
            values[f.name] = _coerce(raw, hints[f.name], f.name, tiered=tier is not None)
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class ChunkedParams(Params):
    """Parameters of the chunk-stitched effects: the recipe's cross-fade length (samples)."""

    crossfade: int = field(default=0, metadata={"engine": True})

    def check(self) -> None:
        super().check()
        if self.crossfade < 0:
            raise ParamError("crossfade", f"must be >= 0 samples, got {self.crossfade}")


def _coerce(value, tp, name: str, *, element: bool = False, tiered: bool = True):
    """``value`` as type ``tp`` (int, float, str, tuple[float, ...], dict[str, str]) or ParamError."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ParamError(name, f"must be a list, got {value!r}")
        return tuple(_coerce(v, args[0], f"{name}[{i}]", element=True) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ParamError(name, f"must be a table, got {value!r}")
        return {str(k): _coerce(v, args[1], f"{name}.{k}", element=True) for k, v in value.items()}
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return check_number(value, name)
    if tp is str and isinstance(value, str):
        return value
    kind = {int: "an integer", float: "a number", str: "a string"}.get(tp, str(tp))
    tiers = "" if element or not tiered else " or a per-tier table {low, medium, high}"
    raise ParamError(name, f"must be {kind}{tiers}, got {value!r}")


@runtime_checkable
class Transform(Protocol):
    """A registered transform: a callable carrying its name, parameter type and output dtype."""

    name: str
    params_type: type[Params]
    output_dtype: type  # np.float32 or np.float64: the dtype of Result.y

    def __call__(self, x: np.ndarray, sr: int, schedule: Schedule, params: Any, *,
                 cache: dict | None = None) -> Result: ...


#: Registry: transform name (as used in recipe files) -> :class:`Transform`.
TRANSFORMS: dict[str, Transform] = registry.track("transform", {})


def register(name: str, params_type: type[Params], output_dtype: type) -> Callable[[Callable], Transform]:
    """Decorator registering a transform function under ``name`` with its parameter type and output dtype.

    Raises
    ------
    generation.registry.NameTaken
        ``name`` is taken by another transform (a built-in is never replaced; a plugin doing this at
        import is left out by :mod:`generation.attributes`, its other registrations undone).
    """
    def deco(fn) -> Transform:
        registry.claim(TRANSFORMS, name, fn, what="transform")  # before touching fn: a refused one is left as it was
        fn.name, fn.params_type, fn.output_dtype = name, params_type, output_dtype
        return fn

    return deco


# ---- shared arithmetic -------------------------------------------------------------------------
def rms(x: np.ndarray) -> float:
    """Root mean square of ``x`` (0 for an empty array)."""
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


def match_rms(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Scale ``y`` to the RMS of ``ref`` (unchanged when ``y`` is silent)."""
    ry = rms(y)
    if ry == 0.0:
        return y
    return (y * np.float32(rms(ref) / ry)).astype(np.float32, copy=False)


def rms_scale(processed: np.ndarray, ref: np.ndarray) -> np.float32:
    """Gain that gives ``processed`` the RMS of ``ref``, as the reference computes it.

    Both RMS values are ``sqrt(mean(v**2))`` with the squares taken in float32 and summed in
    float64; the gain is 1 when either is 0. Chunked categories compute it over the **whole**
    processed segment (chunk with its context, or the whole pre/post part) and apply it to the
    part they keep (benchmark.md §4a).
    """
    def _rms32(v):
        v = np.asarray(v, dtype=np.float32)
        return float(np.sqrt(np.mean(np.square(v), dtype=np.float64))) if v.size else 0.0

    r_ref, r_out = _rms32(ref), _rms32(processed)
    if r_ref <= 0.0 or r_out <= 0.0:
        return np.float32(1.0)
    return np.float32(r_ref / r_out)


def per_sample(schedule, n: int, values=None, start=None, end=None) -> np.ndarray:
    """Expand a schedule to one value per sample of an ``n``-sample clip (float64).

    Step values are repeated over their step's core; ``start``/``end`` fill the samples before the
    onset and after the offset. ``values``/``start``/``end`` default to the schedule's own and may
    be given for a co-varying quantity.
    """
    values = schedule.values if values is None else values
    start = schedule.start if start is None else start
    end = schedule.end if end is None else end
    on, off = schedule.span.onset, schedule.span.offset
    if schedule.layout is not None:
        body = np.repeat(values, schedule.layout.ends - schedule.layout.starts)
    else:
        body = np.asarray(values, dtype=np.float64)
    return np.concatenate([np.full(on, start), body, np.full(n - off, end)])


# ---- chunk / context / cross-fade mechanics (benchmark.md §4a) ----------------------------------
def stitch_joins(lengths, fade: int) -> list[tuple[int, int]]:
    """Where :func:`stitch` puts pieces of these ``lengths``: per piece ``(start in the result, samples
    cross-faded with what comes before it)``; the cross-fade of piece i is ``[start, start + f)``."""
    pos, out = 0, []
    for n in lengths:
        f = min(int(fade), pos, int(n))
        out.append((pos - f, f))
        pos += int(n) - f
    return out


def stitch(pieces: list[np.ndarray], fade: int) -> tuple[np.ndarray, list[int]]:
    """Join pieces with uncompensated linear cross-fades (benchmark.md §4a).

    Each piece after the first overlap-adds its first ``f`` samples with the last ``f`` samples of
    the output built so far, ``f = min(fade, len(output), len(piece))``, with ramps
    ``linspace(0, 1, f)`` (new piece) and ``1 - ramp`` (output). Every join therefore shortens the
    result by ``f`` samples.

    Returns
    -------
    y : np.ndarray, float32
    positions : list of int
        Start of each piece in ``y``.
    """
    pieces = [np.asarray(p, dtype=np.float32) for p in pieces]
    total = sum(len(p) for p in pieces)
    out = np.empty(total, dtype=np.float32)
    pos, positions, ramps = 0, [], {}
    for p, (start, f) in zip(pieces, stitch_joins([len(p) for p in pieces], fade)):
        if f:
            ramp = ramps.get(f)
            if ramp is None:
                ramp = ramps[f] = np.linspace(0.0, 1.0, f, dtype=np.float32)
            out[start:pos] = out[start:pos] * (np.float32(1.0) - ramp) + p[:f] * ramp
        out[pos:pos + len(p) - f] = p[f:]
        positions.append(start)
        pos = start + len(p)
    return out[:pos], positions


def render_chunked(
    x: np.ndarray,
    schedule,
    params: ChunkedParams,
    pieces: list[np.ndarray],
    *,
    outside: str,
    pre: np.ndarray | None = None,
    post: np.ndarray | None = None,
) -> Result:
    """Assemble a chunked clip: audio before the span, cross-faded chunk pieces, audio after it.

    Parameters
    ----------
    x : np.ndarray
        Source signal.
    schedule : Schedule
    params : ChunkedParams
        Gives ``crossfade`` (samples).
    pieces : list of np.ndarray
        Processed core of every step, in order.
    outside : {"keep", "processed"}
        ``keep``: the source's samples outside the span are used untouched (speed, pitch);
        ``processed``: ``pre`` and ``post`` (processed at the start/end values) are used.

    Returns
    -------
    Result
        float32 samples.

    Notes
    -----
    Pieces outside the span are concatenated, not cross-faded: the audio outside the span of
    speed and pitch clips stays bit-identical to the source.
    """
    on, off = schedule.span.onset, schedule.span.offset
    if outside == "keep":
        pre, post = x[:on], x[off:]
    body, _ = stitch(pieces, int(params.crossfade))
    y = np.concatenate([np.asarray(pre, np.float32), body, np.asarray(post, np.float32)])
    return Result(y, len(pre), len(pre) + len(body))


def chunk_segments(x: np.ndarray, layout) -> list[tuple[np.ndarray, int, int]]:
    """(context segment, core offset in it, core length) for every step of ``layout``."""
    return [
        (x[cs:ce], s - cs, e - s)
        for s, e, cs, ce in zip(layout.starts, layout.ends, layout.ctx_starts, layout.ctx_ends)
    ]


def chunked(x, schedule, params: ChunkedParams, process, *, rms_matched: bool, outside: str) -> Result:
    """Run ``process(segment, value) -> processed segment`` over every step and stitch the cores.

    Each step's chunk-with-context is processed whole; with ``rms_matched`` the processed segment
    is scaled to the RMS of the unprocessed segment (:func:`rms_scale`, over the whole segment)
    and only then is the core cut out (benchmark.md §4a). With ``outside="processed"`` the audio
    before/after the span is processed (and matched) as one segment at the start/end value.
    Distortion and roughness use it; clarity, speed and pitch run the same mechanics batched.
    """
    on, off = schedule.span.onset, schedule.span.offset
    pieces = []
    for (seg, c, k), v in zip(chunk_segments(x, schedule.layout), schedule.values):
        out = process(seg, float(v))
        core = out[c:c + k]
        pieces.append((core * rms_scale(out, seg)).astype(np.float32, copy=False) if rms_matched else core)
    pre = post = None
    if outside == "processed":
        def whole(seg, v):
            if not len(seg):
                return seg
            out = process(seg, v)
            return (out * rms_scale(out, seg)).astype(np.float32, copy=False) if rms_matched else out

        pre, post = whole(x[:on], schedule.start), whole(x[off:], schedule.end)
    return render_chunked(x, schedule, params, pieces, outside=outside, pre=pre, post=post)
