"""Greedy decoding inside one ``@njit`` function, picking each token with ``argmax``.

A toy bigram "language model" scores the next token from the current one; the
decoder appends the highest-scoring token until it emits the end token. The whole
loop is compiled, and ``argmax`` is called from it like any numba-supported function.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from argmax_numba import argmax

END = 0


@njit(cache=True)
def greedy_decode(logits_table: np.ndarray, start: int, max_len: int) -> np.ndarray:
    """Token ids chosen greedily from ``logits_table[current_token]`` until END."""
    out = np.empty(max_len, np.int64)
    token = start
    n = 0
    for _ in range(max_len):
        scores = logits_table[token]
        # keepdims=0 is a compile-time constant: a scalar (rank-0) result per step.
        token = argmax(scores, 0, 0, 0)[()]
        out[n] = token
        n += 1
        if token == END:
            break
    return out[:n]


@njit(cache=True)
def batch_predictions(logits: np.ndarray, axis: int) -> np.ndarray:
    """The class of each row of a (batch, classes) score matrix, keeping ONNX's rank."""
    return argmax(logits, axis, 1, 1)


def main() -> None:
    rng = np.random.default_rng(7)
    vocab = 50
    table = rng.standard_normal((vocab, vocab)).astype(np.float32)
    table[:, END] -= 1.0  # make the end token a little less likely
    tokens = greedy_decode(table, 3, 40)
    print("decoded tokens:", tokens.tolist())
    scores = rng.standard_normal((4, 10)).astype(np.float32)
    print(
        "batch predictions (keepdims=1, last index on ties):", batch_predictions(scores, 1).ravel()
    )


if __name__ == "__main__":
    main()
