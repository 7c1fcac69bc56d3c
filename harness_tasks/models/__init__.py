"""VocalGrad model adapters for lm-eval (registered by :func:`harness_tasks.register_models`).

========================  ================================================================
``vocalgrad-hf``          transformers audio-text chat models (:mod:`.hf`, needs torch)
``vocalgrad-openai``      OpenAI-compatible chat completions with audio (:mod:`.openai`)
``vocalgrad-worker``      a model in its own environment over a JSON-lines pipe (:mod:`.worker`)
``vocalgrad-oracle``      signal-processing listener (:mod:`.oracle`)
``vocalgrad-chance``      seeded coin flip (:mod:`.baselines`)
``vocalgrad-constant``    always one direction (:mod:`.baselines`)
========================  ================================================================
"""
