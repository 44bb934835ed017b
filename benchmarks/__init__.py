"""Benchmarks for fastndcg (pytest-benchmark); see benchmarks/_data.py for the inputs."""
