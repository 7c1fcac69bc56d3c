"""lm-eval plugin for VocalGrad: task YAMLs, parser, metrics and model adapters."""
