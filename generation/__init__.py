"""Offline pipeline that renders VocalGrad clips: sources -> speech span -> schedule -> transform -> files."""
