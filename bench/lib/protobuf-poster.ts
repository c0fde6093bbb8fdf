// Creates objects with a protobuf body and a protobuf response, as client-go does for built-in kinds
// (the calibration's protobuf lever). Its own keep-alive agent, so the JSON client's connections are
// not shared with it.
import { Agent, request } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";
import { collectionPath, type KubeObject, type ResourceKind } from "../../runtime/kinds.ts";
import { encodeProtobuf, PROTOBUF_CONTENT_TYPE } from "./protobuf.ts";

export class ProtobufPoster {
  private readonly base: URL;
  private readonly agent: Agent;
  private readonly headers: Record<string, string>;

  private constructor(base: URL, agent: Agent, headers: Record<string, string>) {
    this.base = base;
    this.agent = agent;
    this.headers = headers;
  }

  static async open(kc: KubeConfig, maxSockets: number): Promise<ProtobufPoster> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    const o: import("node:https").RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = String(v);
    const agent = new Agent({ keepAlive: true, maxSockets, ca: o.ca, cert: o.cert, key: o.key });
    return new ProtobufPoster(new URL(cluster.server), agent, headers);
  }

  /** POST the object in protobuf; resolves when the apiserver answered 201 (its protobuf answer is read and dropped). */
  create(rk: ResourceKind, o: KubeObject): Promise<void> {
    const payload = encodeProtobuf(o);
    const url = new URL(this.base.pathname.replace(/\/$/, "") + collectionPath(rk, o.metadata?.namespace), this.base);
    return new Promise((resolve, reject) => {
      const req = request(url, {
        method: "POST",
        agent: this.agent,
        headers: {
          ...this.headers,
          accept: PROTOBUF_CONTENT_TYPE,
          "content-type": PROTOBUF_CONTENT_TYPE,
          "content-length": String(payload.length),
          "user-agent": "bench-protobuf",
        },
      });
      req.once("error", reject);
      req.once("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.once("error", reject);
        res.once("end", () => {
          if (res.statusCode === 201) return resolve();
          // Errors come back as a protobuf Status; its message is readable text inside it.
          const text = Buffer.concat(chunks)
            .toString("latin1")
            .replace(/[^\x20-\x7e]+/g, " ")
            .trim();
          reject(
            new Error(`protobuf create ${rk.kind} ${o.metadata?.name}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`),
          );
        });
      });
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
