"""What the gateway's server reflection shows: the public API (`protos/shikoku/v1/`) with its
comments, and nothing of the internal one.

`make proto` compiles every file of protos/shikoku/v1/, and google/rpc/error_details.proto (the
ErrorInfo, BadRequest and RetryInfo that errors carry), with source info and their imports into
shikoku/server/descriptors.binpb (the server's package of generated code, beside the Connect
stubs; shikoku/v1 belongs to the SDK's wheel). The gateway serves those descriptors
(infra/reflection.py, as grpc.reflection.v1 and v1alpha alike), so `grpcurl describe` finds
every symbol, methods too, and prints the protos' documentation, and grpcurl decodes the
details of an error."""

from __future__ import annotations

from importlib import resources

from google.protobuf import descriptor_pb2

DESCRIPTOR_SET = "descriptors.binpb"


def public_descriptors() -> list[descriptor_pb2.FileDescriptorProto]:
    """The public API's files as compiled from protos/, comments kept, with the error details
    and the files they import."""
    data = resources.files("shikoku.server").joinpath(DESCRIPTOR_SET).read_bytes()
    return list(descriptor_pb2.FileDescriptorSet.FromString(data).file)
