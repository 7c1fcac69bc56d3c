"""The linear probe of benchmark.md §10 (torch): standardise, one linear layer, logistic loss, AdamW."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["PROBE_SETTINGS", "ProbeResult", "balanced_accuracy", "train_probe"]

#: benchmark.md §10 training settings.
PROBE_SETTINGS = {"lr": 1e-3, "weight_decay": 1e-4, "batch_size": 512, "epochs": 200, "seed": 1234}


@dataclass
class ProbeResult:
    """Scores of one probe.

    Attributes
    ----------
    accuracy, balanced_accuracy : float
        On the test features.
    train_accuracy : float
        On the training features (a probe that cannot fit its training set says the features
        carry no linear direction information).
    n_train, n_test, dim : int
    seconds : float
        Training time.
    """

    accuracy: float
    balanced_accuracy: float
    train_accuracy: float
    n_train: int
    n_test: int
    dim: int
    seconds: float

    def as_dict(self) -> dict:
        return asdict(self)


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Mean of the per-class recalls over the classes present in ``y_true``."""
    y_true, y_pred = np.asarray(y_true).astype(int), np.asarray(y_pred).astype(int)
    recalls = [float(np.mean(y_pred[y_true == c] == c)) for c in np.unique(y_true)]
    return float(np.mean(recalls)) if recalls else float("nan")


def _check(x: np.ndarray, y: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x), np.asarray(y).reshape(-1)
    if x.ndim != 2 or len(x) != len(y) or len(y) == 0:
        raise ValueError(f"{name}: need features (n, dim) and n labels, got {x.shape} and {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError(f"{name}: labels must be 0/1")
    return x, y


def train_probe(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, *,
                epochs: int = PROBE_SETTINGS["epochs"], lr: float = PROBE_SETTINGS["lr"],
                weight_decay: float = PROBE_SETTINGS["weight_decay"],
                batch_size: int = PROBE_SETTINGS["batch_size"], seed: int = PROBE_SETTINGS["seed"],
                device: str = "cpu") -> ProbeResult:
    """Fit a logistic-regression probe on train features and score it on test features.

    Features are standardised with the training mean and standard deviation (constant features
    are only centred), then one ``Linear(dim, 1)`` is trained with ``BCEWithLogitsLoss`` and
    AdamW on shuffled mini-batches. Results are deterministic for a given seed and device.

    Parameters
    ----------
    x_train, x_test : np.ndarray, shape (n, dim)
    y_train, y_test : np.ndarray of {0, 1}
    epochs, lr, weight_decay, batch_size, seed
        Defaults: benchmark.md §10 (:data:`PROBE_SETTINGS`).
    device : str
        Torch device.

    Returns
    -------
    ProbeResult
    """
    import time

    import torch

    x_train, y_train = _check(x_train, y_train, "train")
    x_test, y_test = _check(x_test, y_test, "test")
    if x_train.shape[1] != x_test.shape[1]:
        raise ValueError(f"train and test features differ in size: {x_train.shape[1]} vs {x_test.shape[1]}")
    t0 = time.perf_counter()
    dev = torch.device(device)
    xtr = torch.as_tensor(np.asarray(x_train, dtype=np.float32), device=dev)
    xte = torch.as_tensor(np.asarray(x_test, dtype=np.float32), device=dev)
    mean = xtr.mean(dim=0, keepdim=True)
    std = xtr.std(dim=0, unbiased=False, keepdim=True)
    std = torch.where(std > 1e-6, std, torch.ones_like(std))
    xtr = (xtr - mean) / std
    xte = (xte - mean) / std
    ytr = torch.as_tensor(y_train, dtype=torch.float32, device=dev)

    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    layer = torch.nn.Linear(xtr.shape[1], 1).to(dev)
    opt = torch.optim.AdamW(layer.parameters(), lr=lr, weight_decay=weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    n = xtr.shape[0]
    for _ in range(int(epochs)):
        order = torch.randperm(n, generator=gen).to(dev)
        for start in range(0, n, int(batch_size)):
            idx = order[start:start + int(batch_size)]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(layer(xtr[idx]).squeeze(1), ytr[idx])
            loss.backward()
            opt.step()
    with torch.no_grad():
        pred_tr = (layer(xtr).squeeze(1) > 0).cpu().numpy().astype(int)
        pred_te = (layer(xte).squeeze(1) > 0).cpu().numpy().astype(int)
    return ProbeResult(
        accuracy=float(np.mean(pred_te == y_test)), balanced_accuracy=balanced_accuracy(y_test, pred_te),
        train_accuracy=float(np.mean(pred_tr == y_train)), n_train=int(n), n_test=int(len(y_test)),
        dim=int(xtr.shape[1]), seconds=time.perf_counter() - t0,
    )
