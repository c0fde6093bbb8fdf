// API v2 behind a real kube-apiserver: the CRD serves v1 (storage) and v2 once the project's conversion
// patch (config/crd/patches/webhook_in_cronjobs.yaml) is applied, with the conversion and admission webhooks
// on a local server, as `make deploy` wires them in-cluster. Objects written in one version read in the
// other; a v1 client's update of an object written as v2 keeps its schedules; kubectl shows each version's
// columns and documentation; the admission webhooks answer each version at its own fields. Integration
// only: conversion, pruning and the served versions are the apiserver's.
import assert from "node:assert/strict";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { KubernetesObjectApi, type KubernetesObject } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { API_VERSION as V1, KIND, MORE_SCHEDULES_ANNOTATION, RESOURCE } from "../../../api/v1/index.ts";
import { API_VERSION as V2 } from "../../../api/v2/index.ts";
import type { AdmissionHandler, WebhookHandler } from "../../../runtime/webhook/index.ts";
import {
  CONVERT_PATH,
  cronJobConversion,
  cronJobWebhookHandlers,
  MUTATE_PATH,
  VALIDATE_PATH,
} from "../../../webhooks/cronjob_webhook.ts";
import { PROJECT_ROOT } from "../../../envtest/index.ts";
import { installConversionWebhook } from "../../../envtest/webhook.ts";
import { minimalCronJob, variant } from "../../fixtures.ts";
import { probeOf, withWebhookServer } from "../../servers.ts";
import { crdMaxItemsError, serverVersion } from "../../versions.ts";
import { eventually } from "../../eventually.ts";

type Obj = Record<string, any>;

const NS = "default";
const V1_RESOURCE = `cronjobs.v1.${RESOURCE.slice("cronjobs.".length)}`;
const V2_RESOURCE = `cronjobs.v2.${RESOURCE.slice("cronjobs.".length)}`;

/** minimalCronJob written as v2, with these schedules. */
function v2CronJob(name: string, schedules: Obj[]): Obj {
  const v1 = minimalCronJob(name, NS) as Obj;
  const { schedule: _s, ...spec } = v1.spec;
  return { ...v1, apiVersion: V2, spec: { schedules, ...spec } };
}

const THREE = [
  { schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" },
  { schedule: "0 12 * * 6" },
  { schedule: "30 18 * * *", timeZone: "Asia/Tokyo" },
];

describe("CronJob API v2 against kube-apiserver", () => {
  let client: KubernetesObjectApi;
  const probed = new Set<string>();
  const conversions: string[] = [];
  /** The number of objects in each conversion call, in order. */
  const convertedPerCall: number[] = [];

  const handlers = new Map<string, WebhookHandler>();
  for (const [path, handler] of cronJobWebhookHandlers()) {
    const seen: AdmissionHandler = (req) => {
      if (req.dryRun) probed.add(`${path} ${req.kind.version}`);
      return handler(req);
    };
    handlers.set(path, seen);
  }
  handlers.set(CONVERT_PATH, {
    type: "conversion",
    review: (request, logger) => {
      conversions.push(request.desiredAPIVersion);
      convertedPerCall.push(request.objects.length);
      return cronJobConversion.review(request, logger);
    },
  });

  const probe = (object: Record<string, unknown>) => {
    const version = String(object.apiVersion).split("/")[1];
    return { object, seen: () => probed.has(`${MUTATE_PATH} ${version}`) && probed.has(`${VALIDATE_PATH} ${version}`) };
  };
  const webhooks = withWebhookServer(handlers, {
    cluster: {
      prepare: ({ env, server, certs }) =>
        installConversionWebhook(env, {
          crdName: RESOURCE,
          patchPath: join(PROJECT_ROOT, "config", "crd", "patches", "webhook_in_cronjobs.yaml"),
          port: server.port,
          caPEM: certs.caPEM,
        }),
      probes: [
        probe(probeOf(minimalCronJob("unused", NS))),
        probe(probeOf(v2CronJob("unused", [{ schedule: "@daily" }]))),
      ],
    },
  });
  before(() => {
    client = KubernetesObjectApi.makeApiClient(webhooks.env.kubeConfig);
  });

  const kubectl = async (args: string[], input?: string) => {
    const r = await webhooks.env.kubectl(args, input);
    assert.equal(r.code, 0, `kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const getAs = async (resource: string, name: string): Promise<Obj> =>
    JSON.parse(await kubectl(["get", resource, name, "-n", NS, "-o", "json"])) as Obj;

  it("reads an object created as v1 as v2: its schedule is the list's only entry, defaults kept", async () => {
    const v1 = variant(minimalCronJob("made-as-v1", NS), (o) => (o.spec.timeZone = "Europe/Berlin"));
    await client.create(v1 as KubernetesObject);
    const v2 = await getAs(V2_RESOURCE, "made-as-v1");
    assert.equal(v2.apiVersion, V2);
    assert.deepEqual(v2.spec.schedules, [{ schedule: "*/5 * * * *", timeZone: "Europe/Berlin" }]);
    assert.equal(v2.spec.schedule, undefined);
    assert.equal(v2.spec.concurrencyPolicy, "Allow", "defaulted at admission, kept through the conversion");
    assert.ok(conversions.includes(V2), "the apiserver asked the webhook");
  });

  it("reads an object created as v2 with three schedules as v1: the first in spec, the others in the annotation", async () => {
    await client.create(v2CronJob("made-as-v2", THREE) as KubernetesObject);
    const v1 = await getAs(V1_RESOURCE, "made-as-v2");
    assert.deepEqual([v1.apiVersion, v1.spec.schedule, v1.spec.timeZone], [V1, "0 9 * * 1-5", "Europe/Berlin"]);
    assert.deepEqual(JSON.parse(v1.metadata.annotations[MORE_SCHEDULES_ANNOTATION]), THREE.slice(1));
    const v2 = await getAs(V2_RESOURCE, "made-as-v2");
    assert.deepEqual(v2.spec.schedules, THREE);
    assert.equal(v2.metadata.annotations?.[MORE_SCHEDULES_ANNOTATION], undefined, "v1's book stays in v1");
  });

  it("keeps a v2 object's schedules through a v1 client's read-modify-write and a v1 label patch", async () => {
    await client.create(v2CronJob("v1-client", THREE) as KubernetesObject);
    const v1 = await getAs(V1_RESOURCE, "v1-client");
    v1.spec.suspend = true;
    v1.spec.successfulJobsHistoryLimit = 7;
    await kubectl(["replace", "-f", "-"], JSON.stringify(v1));
    await kubectl(["label", V1_RESOURCE, "v1-client", "-n", NS, "team=data"]);
    const v2 = await getAs(V2_RESOURCE, "v1-client");
    assert.deepEqual(v2.spec.schedules, THREE, "no schedule lost");
    assert.deepEqual([v2.spec.suspend, v2.spec.successfulJobsHistoryLimit, v2.metadata.labels.team], [true, 7, "data"]);
  });

  it("applies a v2 manifest with kubectl, client-side and server-side, a second time without a change", async () => {
    const manifest = stringify(v2CronJob("applied-v2", THREE.slice(0, 2)));
    assert.match(await kubectl(["apply", "-f", "-"], manifest), /created/);
    assert.match(await kubectl(["apply", "-f", "-"], manifest), /unchanged/);
    const ssa = stringify(v2CronJob("applied-v2-ssa", THREE));
    await kubectl(["apply", "--server-side", "-f", "-"], ssa);
    const before = await getAs(V2_RESOURCE, "applied-v2-ssa");
    await kubectl(["apply", "--server-side", "-f", "-"], ssa);
    const again = await getAs(V2_RESOURCE, "applied-v2-ssa");
    assert.equal(again.metadata.resourceVersion, before.metadata.resourceVersion, "a no-op apply writes nothing");
    assert.deepEqual(again.spec.schedules, THREE);
  });

  it("shows each version's columns in kubectl get, and v2's fields in kubectl explain", async () => {
    const v2Table = await kubectl(["get", V2_RESOURCE, "-n", NS]);
    assert.match(v2Table.split("\n")[0]!, /^NAME +SCHEDULES +SUSPEND +ACTIVE +LAST SCHEDULE +NEXT SCHEDULE +AGE$/);
    const v1Table = await kubectl(["get", V1_RESOURCE, "-n", NS]);
    assert.match(v1Table.split("\n")[0]!, /^NAME +SCHEDULE +TIMEZONE +SUSPEND /);
    assert.match(v1Table, /^made-as-v2 +0 9 \* \* 1-5 +Europe\/Berlin /m);
    // The apiserver publishes a newly served version's OpenAPI a moment after the CRD changes.
    const explain = await eventually(
      "v2 in the published OpenAPI",
      async () => {
        const r = await webhooks.env.kubectl(["explain", "cronjobs.spec.schedules", `--api-version=${V2}`]);
        return r.code === 0 ? r.stdout : undefined;
      },
      60_000,
    );
    assert.match(explain, /union of\s+theirs/);
    assert.match(await kubectl(["explain", "cronjobs.spec.schedules.timeZone", `--api-version=${V2}`]), /IANA/);
  });

  it("denies a v2 object at v2's fields, and the annotation that is v1's book", async () => {
    const bad = v2CronJob("bad-v2", [{ schedule: "@daily" }, { schedule: "61 * * * *", timeZone: "Mars/Olympus" }]);
    const r = await webhooks.env.kubectl(["apply", "-f", "-"], stringify(bad));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec\.schedules\[1\]\.timeZone: Invalid value: "Mars\/Olympus"/);
    assert.match(r.stderr, /spec\.schedules\[1\]\.schedule: Invalid value: "61 \* \* \* \*"/);
    const sneaky = variant(v2CronJob("sneaky-v2", [{ schedule: "@daily" }]), (o) => {
      o.metadata.annotations = { [MORE_SCHEDULES_ANNOTATION]: '[{"schedule":"@hourly"}]' };
    });
    const s = await webhooks.env.kubectl(["apply", "-f", "-"], stringify(sneaky));
    assert.notEqual(s.code, 0);
    assert.match(
      s.stderr,
      new RegExp(`metadata\\.annotations\\[${MORE_SCHEDULES_ANNOTATION.replaceAll(".", "\\.")}\\]`),
    );
    const tooMany = v2CronJob(
      "too-many",
      Array.from({ length: 17 }, (_, i) => ({ schedule: `${i} * * * *` })),
    );
    const t = await webhooks.env.kubectl(["apply", "-f", "-"], stringify(tooMany));
    assert.notEqual(t.code, 0);
    // The CRD schema's maxItems answers first (the apiserver validates before the validating webhook).
    assert.match(t.stderr, crdMaxItemsError(await serverVersion(webhooks.env.kubeConfig), "spec.schedules", 17, 16));
  });

  it("denies a v1 object whose annotation is not what the conversion writes, naming it", async () => {
    const bad = variant(minimalCronJob("bad-v1", NS), (o) => {
      o.metadata.annotations = { [MORE_SCHEDULES_ANNOTATION]: "every other tuesday" };
    });
    const r = await webhooks.env.kubectl(["apply", "-f", "-"], stringify(bad));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Invalid value: "every other tuesday": must be a JSON list/);
  });

  it("lists both versions of the same objects", async () => {
    const names = async (resource: string) =>
      (JSON.parse(await kubectl(["get", resource, "-n", NS, "-o", "json"])) as { items: Obj[] }).items
        .map((o) => `${o.apiVersion} ${o.metadata.name}`)
        .sort();
    const v1 = await names(V1_RESOURCE);
    const v2 = await names(V2_RESOURCE);
    assert.ok(v1.length >= 4, v1.join(", "));
    assert.deepEqual(
      v2,
      v1.map((l) => l.replace(V1, V2)),
    );
    assert.equal(KIND, "CronJob");
  });

  // What a v2 list costs the webhook, the figure behind docs/operating.md's advice on bulk reads. kube-apiserver
  // keeps a storage, and a watch cache, per served version of a CRD, each decoding from etcd into its own
  // version: a list read from etcd converts each object in a call of its own, and the v2 watch cache holds
  // objects already converted (one call per watch event), so a list it serves calls the webhook for none.
  // resourceVersion=0 is served from the cache on every version (informers list that way). A list without a
  // resourceVersion (kubectl get) is read from etcd before 1.31; from 1.31 (ConsistentListFromCache, beta and on
  // by default) it may be served from the cache once the cache has caught up with etcd, and from etcd where it
  // cannot (an etcd without progress notifications, and some paginated lists), so there both figures are accepted.
  it("converts a v2 list from etcd one object per webhook call, and a list from the watch cache with none", async () => {
    const ns = "v2-list-cost";
    const count = 12;
    await kubectl(["create", "namespace", ns]);
    await kubectl(
      ["apply", "-f", "-"],
      Array.from({ length: count }, (_, i) => stringify(minimalCronJob(`c${i}`, ns))).join("---\n"),
    );
    const base = `/apis/${V2}/namespaces/${ns}/cronjobs`;
    const list = async (query: string): Promise<{ items: Obj[]; calls: number[] }> => {
      const from = convertedPerCall.length;
      const items = (JSON.parse(await kubectl(["get", "--raw", `${base}${query}`])) as { items: Obj[] }).items;
      return { items, calls: convertedPerCall.slice(from) };
    };
    // The cache has every object once a list it serves shows them all.
    await eventually(
      "the v2 watch cache to hold every object",
      async () => (await list("?resourceVersion=0")).items.length === count,
    );

    const fromCache = await list("?resourceVersion=0");
    assert.deepEqual(
      fromCache.items.map((o) => o.apiVersion),
      Array<string>(count).fill(V2),
    );
    assert.deepEqual(fromCache.calls, [], "a list from the watch cache calls the conversion webhook for no object");

    const plain = await list("");
    assert.equal(plain.items.length, count);
    const perObject = Array<number>(count).fill(1);
    const version = await serverVersion(webhooks.env.kubeConfig);
    if (version.major === 1 && version.minor < 31) {
      assert.deepEqual(plain.calls, perObject, "before 1.31 a list is read from etcd: one call per object");
    } else {
      assert.ok(
        plain.calls.length === 0 || JSON.stringify(plain.calls) === JSON.stringify(perObject),
        `1.31 on: from the cache (no call) or from etcd (one per object): ${JSON.stringify(plain.calls)}`,
      );
    }
    await kubectl(["delete", "namespace", ns, "--wait=false"]);
  });
});
