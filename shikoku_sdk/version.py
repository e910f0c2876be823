"""The SDK's version: the one place it is written (the wheel's metadata reads it too)."""

VERSION = "0.1.0"
