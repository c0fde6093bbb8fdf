// runtime/kubeconfig.ts reads kubeconfigs and the in-cluster service account itself (no
// @kubernetes/client-node); only a user with an exec plugin or an auth-provider loads client-node.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { RequestOptions } from "node:https";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  inClusterConfig,
  type LoadedKubeConfig,
  loadKubeConfig,
  parseKubeconfig,
  SERVICE_ACCOUNT_DIR,
} from "../../runtime/kubeconfig.ts";

const dir = mkdtempSync(join(tmpdir(), "kubeconfig-loader-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const CA = "-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n";
const CERT = "-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN EC PRIVATE KEY-----\nkey\n-----END EC PRIVATE KEY-----\n";
const b64 = (s: string) => Buffer.from(s).toString("base64");

function write(name: string, text: string): string {
  const file = join(dir, name);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

async function options(kc: LoadedKubeConfig): Promise<RequestOptions & { headers: Record<string, string> }> {
  const o: RequestOptions = {};
  await kc.applyToHTTPSOptions(o);
  return o as RequestOptions & { headers: Record<string, string> };
}

const TWO_CONTEXTS = `
apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443/
    certificate-authority-data: ${b64(CA)}
- name: dev
  cluster:
    server: https://dev.example:6443
    insecure-skip-tls-verify: true
    tls-server-name: api.dev.internal
users:
- name: robot
  user:
    token: prod-token
- name: me
  user:
    client-certificate: certs/me.crt
    client-key: certs/me.key
contexts:
- name: prod
  context: { cluster: prod, user: robot, namespace: batch }
- name: dev
  context: { cluster: dev, user: me }
current-context: prod
`;

describe("kubeconfig files without client-node", () => {
  it("a token user: the current context's server (no trailing slash), CA data, bearer token, namespace", async () => {
    const kc = loadKubeConfig(write("two/config", TWO_CONTEXTS));
    assert.equal(kc.getCurrentCluster()?.server, "https://prod.example:6443");
    assert.equal(kc.getNamespace(), "batch");
    assert.equal(kc.needsClientNode(), false);
    const o = await options(kc);
    assert.equal(String(o.ca), CA);
    assert.equal(o.headers.Authorization, "Bearer prod-token");
    assert.equal(o.rejectUnauthorized, undefined);
    assert.equal(o.cert, undefined);
  });

  it("a client-certificate user from files (relative to the kubeconfig), insecure-skip-tls-verify, tls-server-name", async () => {
    write("two/certs/me.crt", CERT);
    write("two/certs/me.key", KEY);
    const text = TWO_CONTEXTS.replace("current-context: prod", "current-context: dev");
    const kc = loadKubeConfig(write("two/config-dev", text));
    assert.equal(kc.getCurrentCluster()?.server, "https://dev.example:6443");
    assert.equal(kc.getNamespace(), undefined);
    const o = await options(kc);
    assert.equal(String(o.cert), CERT);
    assert.equal(String(o.key), KEY);
    assert.equal(o.rejectUnauthorized, false);
    assert.equal(o.servername, "api.dev.internal");
    assert.equal(o.ca, undefined);
    assert.equal(o.headers.Authorization, undefined);
  });

  it("client certificate and key data, a CA file, basic auth, impersonation; JSON is read too", async () => {
    const caFile = write("json/ca.crt", CA);
    const kc = loadKubeConfig(
      write(
        "json/config",
        JSON.stringify({
          clusters: [{ name: "c", cluster: { server: "https://json.example", "certificate-authority": caFile } }],
          users: [
            {
              name: "u",
              user: {
                "client-certificate-data": b64(CERT),
                "client-key-data": b64(KEY),
                username: "alice",
                password: "pw",
                as: "bob",
              },
            },
          ],
          contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
          "current-context": "x",
        }),
      ),
    );
    const o = await options(kc);
    assert.equal(String(o.ca), CA);
    assert.equal(String(o.cert), CERT);
    assert.equal(String(o.key), KEY);
    assert.equal(o.auth, "alice:pw");
    assert.equal(o.headers["Impersonate-User"], "bob");
  });

  it("impersonation with uid, groups and extras (one header line each); a proxy-url is refused, not bypassed", async () => {
    const user = {
      token: "t",
      as: "bob",
      "as-uid": "1234",
      "as-groups": ["devs", "ops"],
      "as-user-extra": { "reason/why": ["audit", "debug"] },
    };
    const config = (cluster: object) =>
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://imp.example", ...cluster } }],
        users: [{ name: "u", user }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      });
    const o = await options(loadKubeConfig(write("imp/config", config({}))));
    assert.equal(o.headers["Impersonate-User"], "bob");
    assert.equal(o.headers["Impersonate-Uid"], "1234");
    assert.deepEqual(o.headers["Impersonate-Group"], ["devs", "ops"]);
    assert.deepEqual(o.headers["Impersonate-Extra-reason%2Fwhy"], ["audit", "debug"]);
    const proxied = write("imp/proxied", config({ "proxy-url": "http://proxy.example:3128" }));
    assert.throws(
      () => loadKubeConfig(proxied),
      /cluster "c" has proxy-url "http:\/\/proxy\.example:3128", which this client does not support/,
    );
  });

  it("a token file is re-read on every call (rotation) and a failed re-read keeps the last token", async () => {
    const tokenFile = write("tf/token", "first\n");
    const kc = loadKubeConfig(
      write(
        "tf/config",
        `clusters: [{name: c, cluster: {server: "https://tf.example"}}]
users: [{name: u, user: {token-file: token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
      ),
    );
    assert.equal((await options(kc)).headers.Authorization, "Bearer first");
    writeFileSync(tokenFile, "second");
    assert.equal((await options(kc)).headers.Authorization, "Bearer second");
    rmSync(tokenFile);
    assert.equal((await options(kc)).headers.Authorization, "Bearer second");
  });

  it("$KUBECONFIG with several files: merged, a later current-context wins, a duplicate name is an error", () => {
    const a = write("merge/a", TWO_CONTEXTS);
    const b = write(
      "merge/b",
      `clusters: [{name: other, cluster: {server: "https://other.example"}}]
contexts: [{name: other, context: {cluster: other, user: robot}}]
current-context: other
`,
    );
    const kc = loadKubeConfig(undefined, { KUBECONFIG: [a, b].join(delimiter) });
    assert.equal(kc.getCurrentCluster()?.server, "https://other.example");
    assert.equal(kc.getCurrentUser()?.name, "robot");
    assert.throws(() => loadKubeConfig(undefined, { KUBECONFIG: [a, a].join(delimiter) }), /Duplicate cluster: prod/);
  });

  it("keeps client-node's messages for broken entries and the loader's for a context without a cluster", () => {
    assert.throws(
      () => parseKubeconfig("clusters: [{name: c, cluster: {}}]"),
      /clusters\[0\]\.cluster\.server is missing/,
    );
    assert.throws(() => parseKubeconfig("users: [{user: {token: t}}]"), /users\[0\]\.name is missing/);
    assert.throws(
      () => parseKubeconfig("contexts: [{name: x, context: {user: u}}]"),
      /contexts\[0\]\.context\.cluster is missing/,
    );
    const file = write("nocluster", "clusters: []\ncontexts: []\ncurrent-context: gone\n");
    assert.throws(() => loadKubeConfig(file), /--kubeconfig .*nocluster: the current context has no cluster/);
    assert.throws(
      () => loadKubeConfig(undefined, { KUBECONFIG: file }),
      /KUBECONFIG=.*nocluster: the current context has no cluster/,
    );
  });

  it("order: --kubeconfig, then $KUBECONFIG, then (in a pod) the service account, then ~/.kube/config", () => {
    const home = join(dir, "home");
    const homeConfig = write(
      "home/.kube/config",
      `clusters: [{name: h, cluster: {server: "https://home.example"}}]
contexts: [{name: h, context: {cluster: h}}]
current-context: h
`,
    );
    const flag = write("two/config-order", TWO_CONTEXTS);
    assert.equal(
      loadKubeConfig(flag, { KUBECONFIG: homeConfig }).getCurrentCluster()?.server,
      "https://prod.example:6443",
    );
    assert.equal(
      loadKubeConfig(undefined, { KUBECONFIG: homeConfig, HOME: "/nonexistent" }).getCurrentCluster()?.server,
      "https://home.example",
    );
    // Without a service account token, KUBERNETES_SERVICE_HOST alone does not make it in-cluster.
    if (!existsSync(`${SERVICE_ACCOUNT_DIR}/token`))
      assert.equal(
        loadKubeConfig(undefined, {
          HOME: home,
          KUBERNETES_SERVICE_HOST: "10.0.0.1",
          KUBERNETES_SERVICE_PORT: "443",
        }).getCurrentCluster()?.server,
        "https://home.example",
      );
  });
});

describe("in-cluster configuration", () => {
  const sa = join(dir, "sa");
  mkdirSync(sa, { recursive: true });
  writeFileSync(join(sa, "token"), "sa-token-1");
  writeFileSync(join(sa, "ca.crt"), CA);
  writeFileSync(join(sa, "namespace"), "operators\n");

  it("the service's address, the service account's CA, token (re-read) and namespace", async () => {
    const kc = inClusterConfig({ KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" }, sa);
    assert.equal(kc.getCurrentCluster()?.server, "https://10.96.0.1:443");
    assert.equal(kc.getNamespace(), "operators");
    let o = await options(kc);
    assert.equal(String(o.ca), CA);
    assert.equal(o.headers.Authorization, "Bearer sa-token-1");
    writeFileSync(join(sa, "token"), "sa-token-2");
    o = await options(kc);
    assert.equal(o.headers.Authorization, "Bearer sa-token-2");
  });

  it("brackets an IPv6 host; the plain-HTTP ports are http", () => {
    assert.equal(
      inClusterConfig({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }, sa).getCurrentCluster()
        ?.server,
      "https://[fd00::1]:443",
    );
    assert.equal(
      inClusterConfig({ KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "8080" }, sa).getCurrentCluster()
        ?.server,
      "http://10.0.0.1:8080",
    );
  });
});

describe("client-node only when the kubeconfig needs it", () => {
  const kubeconfigModule = fileURLToPath(new URL("../../runtime/kubeconfig.ts", import.meta.url));

  it("a token kubeconfig loads no @kubernetes/client-node; an exec plugin loads it, on the first request", () => {
    const tokenConfig = write("lazy/token", TWO_CONTEXTS);
    const execConfig = write(
      "lazy/exec",
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://exec.example", "certificate-authority-data": b64(CA) } }],
        users: [
          {
            name: "u",
            user: {
              exec: {
                apiVersion: "client.authentication.k8s.io/v1beta1",
                command: process.execPath,
                args: [
                  "-e",
                  "console.log(JSON.stringify({apiVersion:'client.authentication.k8s.io/v1beta1',kind:'ExecCredential',status:{token:'exec-token'}}))",
                ],
              },
            },
          },
        ],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
        "current-context": "x",
      }),
    );
    // A fresh process, so nothing else has loaded client-node.
    const script = `
      import { registerHooks } from "node:module";
      const loaded = () => resolved.some((u) => u.includes("@kubernetes/client-node"));
      const resolved = [];
      registerHooks({ resolve(s, c, next) { const r = next(s, c); resolved.push(r.url); return r; } });
      const { loadKubeConfig } = await import(${JSON.stringify(kubeconfigModule)});
      const out = {};
      const token = loadKubeConfig(${JSON.stringify(tokenConfig)});
      const o1 = {};
      await token.applyToHTTPSOptions(o1);
      out.tokenHeader = o1.headers.Authorization;
      out.afterToken = loaded();
      const exec = loadKubeConfig(${JSON.stringify(execConfig)});
      out.needs = exec.needsClientNode();
      out.afterLoad = loaded();
      const o2 = {};
      await exec.applyToHTTPSOptions(o2);
      out.execHeader = o2.headers.Authorization;
      out.execCA = String(o2.ca);
      out.afterExec = loaded();
      console.log(JSON.stringify(out));
    `;
    const out = JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).trim(),
    ) as Record<string, unknown>;
    assert.deepEqual(out, {
      tokenHeader: "Bearer prod-token",
      afterToken: false,
      needs: true,
      afterLoad: false,
      execHeader: "Bearer exec-token",
      execCA: CA,
      afterExec: true,
    });
  });
});
