// The public API over the Connect protocol with plain fetch: unary calls are a POST of the
// request as protobuf JSON; server streams send one enveloped JSON request and read enveloped
// JSON messages until the end-of-stream message (docs/browser.md).
const PREFIX = "/shikoku.v1.";
const END_STREAM = 0x02;
const COMPRESSED = 0x01;
// Codes worth another try: the call may succeed later as it is.
const RETRYABLE = new Set([
  "unavailable",
  "deadline_exceeded",
  "aborted",
  "resource_exhausted",
  "unknown",
  "canceled",
]);
const HTTP_CODES = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "unimplemented",
  408: "deadline_exceeded",
  409: "aborted",
  412: "failed_precondition",
  413: "resource_exhausted",
  415: "internal",
  429: "unavailable",
  431: "resource_exhausted",
  502: "unavailable",
  503: "unavailable",
  504: "unavailable",
};

export class ApiError extends Error {
  constructor(code, message, { reason = "", metadata = {}, httpStatus = 0, retryAfter = 0 } = {}) {
    super(message || code);
    this.code = code; // Connect code: "not_found", "failed_precondition", ...
    this.reason = reason; // the google.rpc.ErrorInfo reason: "NOT_YOUR_TURN", ...
    this.metadata = metadata;
    this.httpStatus = httpStatus;
    this.retryAfter = retryAfter;
  }

  get retryable() {
    return RETRYABLE.has(this.code);
  }
}

// --- google.rpc.ErrorInfo from a Connect error detail (base64 protobuf; `debug` if sent)

function base64Bytes(value) {
  const standard = value.replace(/-/g, "+").replace(/_/g, "/");
  const padded = standard + "=".repeat((4 - (standard.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (ch) => ch.charCodeAt(0));
}

// The fields of a protobuf message: [number, value] with value a number or bytes.
function* protobufFields(bytes) {
  let at = 0;
  const varint = () => {
    let result = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[at++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return result;
    }
  };
  while (at < bytes.length) {
    const key = varint();
    const [number, wire] = [Math.floor(key / 8), key % 8];
    if (wire === 0) yield [number, varint()];
    else if (wire === 2) {
      const length = varint();
      yield [number, bytes.subarray(at, at + length)];
      at += length;
    } else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else return;
  }
}

function errorInfo(detail) {
  if (detail.debug && typeof detail.debug === "object") {
    return { reason: detail.debug.reason || "", metadata: detail.debug.metadata || {} };
  }
  const utf8 = new TextDecoder();
  const info = { reason: "", metadata: {} };
  for (const [number, value] of protobufFields(base64Bytes(detail.value || ""))) {
    if (number === 1) info.reason = utf8.decode(value);
    if (number === 3) {
      const entry = {};
      for (const [n, v] of protobufFields(value)) entry[n] = utf8.decode(v);
      info.metadata[entry[1] || ""] = entry[2] || "";
    }
  }
  return info;
}

function errorFrom(body, httpStatus, retryAfter = 0) {
  const code = (body && body.code) || HTTP_CODES[httpStatus] || "unknown";
  const details = (body && body.details) || [];
  const info = details.find((d) => (d.type || "").endsWith("google.rpc.ErrorInfo"));
  let decoded = { reason: "", metadata: {} };
  try {
    if (info) decoded = errorInfo(info);
  } catch {
    // An undecodable detail leaves the code and message.
  }
  return new ApiError(code, (body && body.message) || `HTTP ${httpStatus}`, {
    ...decoded,
    httpStatus,
    retryAfter,
  });
}

async function errorOfResponse(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  return errorFrom(body, response.status, Number(response.headers.get("retry-after")) || 0);
}

// --- the client

export class Api {
  constructor({ apiKey = "", baseUrl = "" } = {}) {
    this.apiKey = apiKey;
    this.baseUrl = baseUrl;
  }

  headers(token, contentType) {
    const headers = { "Content-Type": contentType, "Connect-Protocol-Version": "1" };
    if (this.apiKey) headers["x-api-key"] = this.apiKey;
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  // One unary call: `method` is "GameService/GetState"; resolves to the response message.
  async call(method, request, { token = "", signal, timeoutMs = 15000 } = {}) {
    let response;
    try {
      response = await fetch(this.baseUrl + PREFIX + method, {
        method: "POST",
        headers: { ...this.headers(token, "application/json"), "Connect-Timeout-Ms": String(timeoutMs) },
        body: JSON.stringify(request || {}),
        signal,
      });
    } catch (error) {
      if (signal && signal.aborted) throw error;
      throw new ApiError("unavailable", `no answer: ${error.message}`);
    }
    if (!response.ok) throw await errorOfResponse(response);
    return response.json();
  }

  // A server stream: yields each response message; ends at the end-of-stream message, throws
  // its error, or throws "unavailable" when the connection ends without one.
  async *stream(method, request, { token = "", signal } = {}) {
    const json = new TextEncoder().encode(JSON.stringify(request || {}));
    const body = new Uint8Array(5 + json.length);
    new DataView(body.buffer).setUint32(1, json.length);
    body.set(json, 5);
    let response;
    try {
      response = await fetch(this.baseUrl + PREFIX + method, {
        method: "POST",
        headers: this.headers(token, "application/connect+json"),
        body,
        signal,
      });
    } catch (error) {
      if (signal && signal.aborted) throw error;
      throw new ApiError("unavailable", `no answer: ${error.message}`);
    }
    if (!response.ok) throw await errorOfResponse(response);
    const reader = response.body.getReader();
    const utf8 = new TextDecoder();
    let buffer = new Uint8Array(0);
    try {
      for (;;) {
        while (buffer.length >= 5) {
          const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
          const [flags, length] = [view.getUint8(0), view.getUint32(1)];
          if (buffer.length < 5 + length) break;
          const message = JSON.parse(utf8.decode(buffer.subarray(5, 5 + length)) || "{}");
          buffer = buffer.slice(5 + length);
          if (flags & COMPRESSED) throw new ApiError("internal", "a compressed message was not asked for");
          if (flags & END_STREAM) {
            if (message.error) throw errorFrom(message.error, 200);
            return;
          }
          yield message;
        }
        let chunk;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (signal && signal.aborted) throw error;
          throw new ApiError("unavailable", `the stream broke: ${error.message}`);
        }
        if (chunk.done) throw new ApiError("unavailable", "the stream ended without its end message");
        const joined = new Uint8Array(buffer.length + chunk.value.length);
        joined.set(buffer);
        joined.set(chunk.value, buffer.length);
        buffer = joined;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }
}
