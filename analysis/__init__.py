"""Understanding VocalGrad results: the report, layer probes, fine-tuning, the listening test and the clip inspector.

``generation`` makes the dataset, ``harness_tasks`` scores models, ``analysis`` explains the scores. Modules here
read results files and Hub/render folders; anything that runs a model goes through ``harness_tasks.models``.
"""
