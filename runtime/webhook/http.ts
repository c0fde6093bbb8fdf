// One webhook request over HTTP (controller-runtime's admission http.go): a POST with a JSON body of at
// most maxBodyBytes, decoded, handed to the handler, and answered with a review of the same kind (an
// AdmissionReview, or a ConversionReview for a conversion webhook). Whatever goes wrong is answered with
// the status the apiserver expects rather than thrown at the server.
import type http from "node:http";
import http2 from "node:http2";
import type { Readable } from "node:stream";
import type { Logger } from "../log.ts";
import { errored, type AdmissionHandler, type AdmissionRequest, type AdmissionResponse } from "./admission.ts";
import {
  conversionFailureResponse,
  decodeConversionReview,
  encodeConversionReview,
  type ConversionHandler,
  type ConversionRequest,
} from "./conversion.ts";
import {
  checkResult,
  decodeReview,
  encodeReview,
  failureResponse,
  HTTPError,
  isJSONContentType,
  responseFor,
} from "./review.ts";

/** The parts of http.IncomingMessage and http2.Http2ServerRequest (compatibility API) used here. */
export type Incoming = Readable & {
  readonly method?: string;
  readonly url?: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly httpVersionMajor: number;
};

export interface Outgoing {
  readonly headersSent: boolean;
  /** A header for whatever response follows (Node's responses have it; writeHead's headers are merged in). */
  setHeader?(name: string, value: string): unknown;
  writeHead(statusCode: number, headers?: http.OutgoingHttpHeaders): unknown;
  end(chunk: string): unknown;
  once(event: "close", listener: () => void): unknown;
}

export interface ReviewHTTPOptions {
  maxBodyBytes: number;
  logger: Logger;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function send(res: Outgoing, code: number, body: string, headers: http.OutgoingHttpHeaders, logger: Logger) {
  try {
    res.writeHead(code, { "content-length": Buffer.byteLength(body), ...headers });
    res.end(body);
  } catch (err) {
    // The client went away (an HTTP/2 stream reset, a destroyed socket); nobody is left to answer.
    logger.debug("cannot write the webhook response", { error: messageOf(err) });
  }
}

function sendJSON(res: Outgoing, code: number, body: string, headers: http.OutgoingHttpHeaders, logger: Logger) {
  send(res, code, body, { "content-type": "application/json", ...headers }, logger);
}

/** One kind of review: how its request is decoded and answered, and how a refusal reads. */
interface ReviewCodec<R> {
  /** The request in a body; throws HTTPError(400) naming what is wrong with it. */
  decode(body: Buffer): R;
  uid(request: R): string;
  /** Hands the request to the handler and writes a 200 answer with `send`; a failing handler is an answer too. */
  answer(request: R, reqLog: Logger, send: (body: string) => void): Promise<void>;
  /** The body of an answer to a request that never reached the handler. */
  failure(code: number, message: string): string;
}

/**
 * Serves one admission request for the registered `path`. Resolves with the status code answered, or
 * undefined when the client left before there was anything to answer (so there is no code to count).
 */
export function serveAdmission(
  path: string,
  handler: AdmissionHandler,
  req: Incoming,
  res: Outgoing,
  o: ReviewHTTPOptions,
): Promise<number | undefined> {
  return serveReview(path, admissionCodec(handler), req, res, o);
}

/** serveAdmission for a conversion webhook: ConversionReview in and out. */
export function serveConversion(
  path: string,
  handler: ConversionHandler,
  req: Incoming,
  res: Outgoing,
  o: ReviewHTTPOptions,
): Promise<number | undefined> {
  return serveReview(path, conversionCodec(handler), req, res, o);
}

function serveReview<R>(
  path: string,
  codec: ReviewCodec<R>,
  req: Incoming,
  res: Outgoing,
  o: ReviewHTTPOptions,
): Promise<number | undefined> {
  return serve(path, codec, req, res, o).catch((err: unknown) => {
    o.logger.error("webhook request failed", err, { webhook: path });
    if (!res.headersSent) sendJSON(res, 500, codec.failure(500, messageOf(err)), {}, o.logger);
    return 500;
  });
}

async function serve<R>(
  path: string,
  codec: ReviewCodec<R>,
  req: Incoming,
  res: Outgoing,
  o: ReviewHTTPOptions,
): Promise<number | undefined> {
  const fail = (err: HTTPError, headers: http.OutgoingHttpHeaders = {}) => {
    o.logger.error("bad webhook request", undefined, { webhook: path, code: err.code, reason: err.message });
    sendJSON(res, err.code, codec.failure(err.code, err.message), headers, o.logger);
    return err.code;
  };
  const tooLarge = () => {
    const code = fail(
      new HTTPError(413, `request entity is too large; limit is ${o.maxBodyBytes} bytes`),
      closeAfter(req),
    );
    stopReading(req, res);
    return code;
  };
  if (req.method !== "POST")
    return fail(new HTTPError(405, `method ${req.method ?? ""} not allowed; use POST`), { allow: "POST" });
  if (!isJSONContentType(req.headers["content-type"])) {
    return fail(new HTTPError(400, `contentType=${req.headers["content-type"] ?? ""}, expected application/json`));
  }
  if (Number(req.headers["content-length"] ?? NaN) > o.maxBodyBytes) return tooLarge();
  let body: Buffer | undefined;
  try {
    body = await readBody(req, o.maxBodyBytes);
  } catch (err) {
    o.logger.debug("webhook request aborted", { webhook: path, error: messageOf(err) });
    return undefined;
  }
  if (body === undefined) return tooLarge();
  let request: R;
  try {
    request = codec.decode(body);
  } catch (err) {
    if (err instanceof HTTPError) return fail(err);
    throw err;
  }
  const reqLog = o.logger.withValues({ webhook: path, UID: codec.uid(request) });
  await codec.answer(request, reqLog, (answer) => sendJSON(res, 200, answer, {}, o.logger));
  return 200;
}

function admissionCodec(handler: AdmissionHandler): ReviewCodec<AdmissionRequest> {
  return {
    decode: decodeReview,
    uid: (request) => request.uid,
    answer: (request, reqLog, send) => answerAdmission(handler, request, reqLog, send),
    failure: (code, message) => encodeReview(failureResponse(code, message)),
  };
}

/** Calls the handler and answers with its decision; a failing handler is a denial with code 500. */
async function answerAdmission(
  handler: AdmissionHandler,
  request: AdmissionRequest,
  reqLog: Logger,
  send: (body: string) => void,
) {
  if (reqLog.enabled("debug")) {
    reqLog.debug("received request", {
      kind: request.kind,
      resource: request.resource,
      operation: request.operation,
      namespace: request.namespace,
      name: request.name,
    });
  }
  let response: AdmissionResponse;
  try {
    response = responseFor(request, checkResult(await handler(request)));
  } catch (err) {
    reqLog.error("webhook handler failed", err);
    response = responseFor(request, errored(500, err));
  }
  send(encodeReview(response));
  if (reqLog.enabled("debug")) {
    reqLog.debug("wrote response", {
      allowed: response.allowed,
      code: response.status?.code,
      reason: response.status?.reason,
      message: response.status?.message,
    });
  }
}

function conversionCodec(handler: ConversionHandler): ReviewCodec<ConversionRequest> {
  return {
    decode: decodeConversionReview,
    uid: (request) => request.uid,
    answer: async (request, reqLog, send) => {
      if (reqLog.enabled("debug")) {
        reqLog.debug("received request", {
          desiredAPIVersion: request.desiredAPIVersion,
          objects: request.objects.length,
        });
      }
      const response = await handler.review(request, reqLog);
      send(encodeConversionReview(response));
      if (reqLog.enabled("debug")) {
        reqLog.debug("wrote response", { status: response.result.status, message: response.result.message });
      }
    },
    failure: (code, message) => encodeConversionReview(conversionFailureResponse(code, message)),
  };
}

/** Resolves with the body, or undefined when it grew past `limit` (reading stops there). */
function readBody(req: Incoming, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      fn();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.pause();
        settle(() => resolve(undefined));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks, size)));
    const onError = (err: Error) => settle(() => reject(err));
    const onClose = () => settle(() => reject(new Error("the client closed the request before sending its body")));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

/** Headers that end an HTTP/1 connection after this response; HTTP/2 forbids the header. */
function closeAfter(req: Incoming): http.OutgoingHttpHeaders {
  return req.httpVersionMajor === 1 ? { connection: "close" } : {};
}

/** After an early answer (413), refuse the rest of an oversized upload rather than buffering it. */
function stopReading(req: Incoming, res: Outgoing): void {
  req.pause();
  res.once("close", () => {
    // HTTP/1: the connection closes after the response (connection: close). HTTP/2: reset just this stream.
    const stream = (req as { stream?: http2.ServerHttp2Stream }).stream;
    if (stream && !stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
  });
}
