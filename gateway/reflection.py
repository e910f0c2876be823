"""What the gateway's server reflection shows: the public API (`protos/shikoku/v1/`) with its
comments, and nothing of the internal one.

`make proto` compiles every file of protos/shikoku/v1/ with source info and its imports into
shikoku/v1/descriptors.binpb, beside the generated code; the gateway serves those descriptors,
so `grpcurl describe` prints the protos' documentation and finds every symbol, methods too."""

from __future__ import annotations

from importlib import resources

from google.protobuf import descriptor_pb2

DESCRIPTOR_SET = "descriptors.binpb"


def public_descriptors() -> list[descriptor_pb2.FileDescriptorProto]:
    """The public API's files as compiled from protos/, comments kept, with the files they
    import (google/protobuf/struct.proto)."""
    data = resources.files("shikoku.v1").joinpath(DESCRIPTOR_SET).read_bytes()
    return list(descriptor_pb2.FileDescriptorSet.FromString(data).file)
