"""The engine's version: the project's, which the SDK's version (shikoku_sdk/version.py)
writes. The engine's wheel pins the SDK at that version, so the SDK's installed metadata
tells it without importing the SDK (whose package imports grpc)."""

from __future__ import annotations

from importlib.metadata import version

VERSION = version("shikoku-sdk")
