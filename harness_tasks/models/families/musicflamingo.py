"""Music Flamingo (``musicflamingo``): Audio Flamingo 3's layout with ``<|sound_bos|>`` +
``<sound>`` x n + ``<|sound_eos|>`` per clip.

The processor chat template that transformers' ``convert_musicflamingo_to_hf.py`` writes behaves
like Audio Flamingo 3's (one ``<sound>`` per turn, before the turn's text, the text parts joined
with nothing between them) with its own default system turn ("You are Music Flamingo, a
multimodal assistant for language and music. ..."); so the family lays requests out per turn
exactly as :class:`~.audioflamingo3.AudioFlamingo3` does. The conversion's generation config has
a single eos (the tokenizer's).

Names: ``nvidia/audio-flamingo-next-hf`` is model type ``musicflamingo`` (this family), while
``nvidia/music-flamingo-hf`` is model type ``audioflamingo3`` (the Audio Flamingo 3 family).
Needs transformers 5.x (``MusicFlamingoForConditionalGeneration``; 5.24 tested here).
"""

from .audioflamingo3 import AudioFlamingo3


class MusicFlamingo(AudioFlamingo3):
    name = "musicflamingo"
    model_types = ("musicflamingo",)
    default_class = "MusicFlamingoForConditionalGeneration"
    min_transformers = "5.0"
