import random

import numpy as np
import pytest

from generators.streams import numpy_legacy_stream, pcg64_permutation, python_random_stream


@pytest.mark.parametrize("seed", [0, 1, 12345, 12345 + 256, 2**32 - 1, 2**32, 2**70 + 3])
def test_python_random_stream_equals_cpython_random(seed: int) -> None:
    reference = random.Random(seed)
    expected = [reference.random() for _ in range(1000)]
    assert python_random_stream(seed).random_sample(1000).tolist() == expected


def test_python_random_stream_differs_from_integer_seeding() -> None:
    # numpy's scalar seeding (init_genrand) is a different stream: using it would break bit-exactness.
    assert python_random_stream(12345).random_sample() != np.random.RandomState(12345).random_sample()


def test_negative_seed_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="abs"):
        python_random_stream(-5)


def test_streams_leave_global_state_alone() -> None:
    before_py, before_np = random.getstate(), np.random.get_state()[1].copy()
    python_random_stream(7).random_sample(10)
    numpy_legacy_stream(7).permutation(10)
    assert random.getstate() == before_py
    assert np.array_equal(np.random.get_state()[1], before_np)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 64, 101, 257, 1000])
def test_pcg64_permutation_equals_numpys_generator_without_calling_it(n: int) -> None:
    for seed in (0, 1, 12346, 12350, 2**40 + 7):
        expected = np.random.Generator(np.random.PCG64(seed)).permutation(n)
        assert np.array_equal(pcg64_permutation(seed, n), expected)
