"""Benchmark problems, data loaders, competing methods and paper reproductions."""
