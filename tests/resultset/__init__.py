"""Tests of auger.resultset."""
