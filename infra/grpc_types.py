"""Type names shared by the gRPC code."""

from typing import Any

import grpc

Context = grpc.aio.ServicerContext[Any, Any]
