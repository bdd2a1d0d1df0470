/**
 * OTLP/HTTP with protobuf bodies, for the receiver (otlpReceiver.ts): what the Functions host's own
 * exporter sends (OpenTelemetry .NET speaks gRPC and http/protobuf, never JSON). protobufjs decodes
 * the trace messages from the part of open-telemetry/opentelemetry-proto the receiver reads
 * (opentelemetry/proto/{common,resource,trace}/v1, collector/trace/v1: field numbers as there;
 * fields not listed are skipped by the decoder, as protobuf does with unknown fields), and the result
 * is handed back in the OTLP/JSON shape (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
 * ids as base64 (the receiver reads either), 64-bit integers as decimal text, enums as numbers.
 */
import protobuf from 'protobufjs';

const schema = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; fixed32 flags = 6; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Link links = 13;
  Status status = 15;
  fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const request = protobuf.parse(schema, { keepCase: false }).root.lookupType('otlp.ExportTraceServiceRequest');

/** An OTLP trace export request in protobuf, as the OTLP/JSON object of the same request. */
export function tracesFromProtobuf(body: Buffer): unknown {
  const message = request.decode(body);
  return request.toObject(message, { longs: String, enums: Number, bytes: String });
}
