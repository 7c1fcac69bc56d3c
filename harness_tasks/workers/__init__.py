"""Worker programs for ``vocalgrad-worker`` (a model in its own environment, over a JSON-lines pipe).

============================  ===================================================================
:mod:`.protocol`              the worker side of the protocol; standard library only (copy it)
:mod:`.transformers_worker`   any ``vocalgrad-hf`` model in another environment (tested here)
:mod:`.kimi_audio`            Kimi-Audio-7B-Instruct through ``kimia_infer`` (MoonshotAI/Kimi-Audio 2607d51)
:mod:`.mimo_audio`            MiMo-Audio-7B-Instruct through ``src.mimo_audio`` (XiaomiMiMo/MiMo-Audio 691ce54)
:mod:`.step_audio2`           Step-Audio 2 mini through ``stepaudio2`` (stepfun-ai/Step-Audio2 c22bfad)
============================  ===================================================================

Run one with ``python -m harness_tasks.workers.<name> key=value ...`` (this checkout on
``PYTHONPATH``) or as a plain script (``python path/to/harness_tasks/workers/<name>.py``): the
modules import nothing of the toolkit except :mod:`.protocol`. docs/models.md has the commands and
what was checked against each upstream commit (the real 7B models were not run here).
"""
