// The image built without a container engine (`make image-build`, hack/build-image.ts) follows the
// Dockerfile: hack/image/plan.ts derives its config and files from the Dockerfile's final stage, and
// `make lint-dockerfile` fails on anything in the Dockerfile the builder cannot reproduce.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { envOf, parseDockerfile } from "../../hack/image/dockerfile.ts";
import { BASE_PATH, imageConfig, NODE_ON_PATH, planImage } from "../../hack/image/plan.ts";
import { buildLayout, lintDockerfile, NONROOT } from "../../hack/lint-dockerfile.ts";
import { envValue, readManagerDeployment } from "../../envtest/manager-deployment.ts";

const root = resolve(import.meta.dirname, "..", "..");
const original = readFileSync(join(root, "Dockerfile"), "utf8");
const layout = buildLayout(root);
const isDirectory = (p: string): boolean => existsSync(join(root, p)) && statSync(join(root, p)).isDirectory();
const plan = (text: string) => planImage(parseDockerfile(text), { ...layout, isDirectory });

/** The final stage's lines, read without the parser: what a reader of the Dockerfile sees it declare. */
function declared(text: string): { user?: string; entrypoint?: string[]; workdir?: string; env: Map<string, string> } {
  const lines = text.split("\n");
  const finalFrom = lines.findLastIndex((l) => /^FROM\s/i.test(l));
  const stage = lines.slice(finalFrom + 1).filter((l) => !l.startsWith("#"));
  const last = (k: string): string | undefined =>
    stage
      .filter((l) => l.startsWith(k + " "))
      .at(-1)
      ?.slice(k.length + 1)
      .trim();
  const env = new Map<string, string>();
  for (const l of stage.filter((l) => l.startsWith("ENV "))) {
    const m = /^ENV (\w+)[= ](.*)$/.exec(l)!;
    env.set(m[1]!, m[2]!);
  }
  const entrypoint = last("ENTRYPOINT");
  return {
    ...(last("USER") ? { user: last("USER") } : {}),
    ...(entrypoint ? { entrypoint: JSON.parse(entrypoint) as string[] } : {}),
    ...(last("WORKDIR") ? { workdir: last("WORKDIR") } : {}),
    env,
  };
}

describe("the image make image-build writes (hack/image/plan.ts)", () => {
  it("has the config the Dockerfile's final stage declares", () => {
    const { config, problems } = imageConfig(parseDockerfile(original));
    assert.deepEqual(problems, []);
    const want = declared(original);
    assert.equal(config.User, want.user);
    assert.deepEqual(config.Entrypoint, want.entrypoint);
    assert.equal(config.Cmd, undefined, "an ENTRYPOINT in the stage resets the node image's CMD");
    assert.equal(config.WorkingDir, want.workdir);
    assert.deepEqual(config.Env, [`PATH=${BASE_PATH}`, ...[...want.env].map(([k, v]) => `${k}=${v}`)]);
    // And what the Deployment relies on.
    assert.equal(config.User, `${NONROOT}:${NONROOT}`);
    assert.deepEqual(config.Entrypoint, ["node", "dist/cmd/main.js"]);
    const manager = readManagerDeployment(root)!.container;
    assert.ok(config.Env.includes(`NODE_OPTIONS=${envValue(manager, "NODE_OPTIONS")}`));
    assert.ok(config.Env.includes("NODE_ENV=production"));
  });

  it("copies what the final stage copies: package.json, npm ci --omit=dev's node_modules, the build output", () => {
    const p = plan(original);
    assert.deepEqual(p.problems, []);
    assert.equal(p.node, NODE_ON_PATH, "node where node:* images keep it, on PATH for `command: [node]`");
    assert.equal(p.nodeMajor, 24);
    assert.deepEqual([p.uid, p.gid], [NONROOT, NONROOT]);
    const copies = p.layers.flatMap((l) => l.copies);
    assert.equal(p.layers.length, 3, "one layer per COPY");
    assert.deepEqual(
      copies.map((c) => [c.source.kind, c.dest, c.directory]),
      [
        ["context", "/workspace/package.json", false],
        ["production-dependencies", "/workspace/node_modules", true],
        ["build-output", "/workspace/dist", true],
      ],
    );
    const deps = copies[1]!.source;
    assert.ok(deps.kind === "production-dependencies");
    assert.deepEqual(deps.argv.slice(0, 2), ["npm", "ci"]);
    assert.ok(deps.argv.includes("--omit=dev") && deps.argv.includes("--ignore-scripts"));
    assert.deepEqual(
      deps.manifests.map((m) => m.from),
      ["package.json", "package-lock.json"],
    );
    assert.deepEqual(copies[2]!.source, { kind: "build-output", path: layout.outDir });
  });

  it("follows edits of the Dockerfile instead of restating its values", () => {
    const p = plan(
      original
        .replace(
          /^ENV NODE_OPTIONS=.*$/m,
          'ENV NODE_OPTIONS="--max-semi-space-size=32 --enable-source-maps" A=$NODE_ENV',
        )
        .replace(/^WORKDIR \/workspace$(?![\s\S]*^FROM)/m, "WORKDIR /app")
        .replace(
          /^(ENTRYPOINT .*)$/m,
          '$1\nCMD ["--leader-elect"]\nLABEL org.opencontainers.image.title="cronjob operator"\nEXPOSE 8081 9443/tcp',
        ),
    );
    assert.deepEqual(p.problems, []);
    assert.deepEqual(p.config.Env, [
      `PATH=${BASE_PATH}`,
      "NODE_ENV=production",
      "NODE_OPTIONS=--max-semi-space-size=32 --enable-source-maps",
      "A=production",
    ]);
    assert.equal(p.config.WorkingDir, "/app");
    assert.deepEqual(p.config.Cmd, ["--leader-elect"]);
    assert.deepEqual(p.config.Labels, { "org.opencontainers.image.title": "cronjob operator" });
    assert.deepEqual(p.config.ExposedPorts, { "8081/tcp": {}, "9443/tcp": {} });
    assert.deepEqual(
      p.layers.flatMap((l) => l.copies.map((c) => c.dest)),
      ["/app/package.json", "/app/node_modules", "/app/dist"],
    );
  });

  it("reads ENV like Docker: quotes, the legacy form, $VAR from before the instruction", () => {
    const df = parseDockerfile(
      "FROM node:24-alpine\nENV A=1 B=\"two words\" C='$A' D=${A}x E=${UNSET:-dflt}\nENV F $B\nENV A=2 G=$A\n",
    );
    assert.deepEqual(
      [...envOf(df.stages[0]!)],
      [
        ["A", "2"],
        ["B", "two words"],
        ["C", "$A"],
        ["D", "x"], // A is set by the same instruction: not yet
        ["E", "dflt"],
        ["F", "two words"],
        ["G", "1"],
      ],
    );
  });
});

describe("make lint-dockerfile keeps the Dockerfile and make image-build in step", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "dockerfile-image-test-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  /** The lint's problems for the project's Dockerfile with `edit` applied (statically: no compile). */
  const lintEdited = (edit: (s: string) => string): string => {
    const file = join(dir, "Dockerfile");
    const edited = edit(original);
    assert.notEqual(edited, original, "the edit changed nothing");
    writeFileSync(file, edited);
    return lintDockerfile({ root, dockerfile: file, compile: false }).problems.join("\n");
  };
  const beforeUser = (ins: string) => (s: string) => s.replace(/^USER /m, `${ins}\nUSER `);

  it("passes the project's Dockerfile", () => {
    assert.deepEqual(lintDockerfile({ root, compile: false }).problems, []);
  });

  it("fails on a final-stage instruction the builder cannot reproduce", () => {
    assert.match(
      lintEdited(beforeUser("RUN apk add --no-cache curl")),
      /RUN in the final stage: hack\/build-image\.ts cannot reproduce it.*make image-build would not match/,
    );
    assert.match(
      lintEdited(beforeUser("HEALTHCHECK CMD node -e 1")),
      /HEALTHCHECK in the final stage: hack\/build-image\.ts cannot reproduce it/,
    );
    assert.match(lintEdited(beforeUser("VOLUME /data")), /VOLUME in the final stage/);
  });

  it("fails on a COPY the builder cannot trace", () => {
    assert.match(
      lintEdited(beforeUser("COPY --from=busybox:1.36 /bin/busybox /bin/busybox")),
      /COPY --from=busybox:1\.36: hack\/build-image\.ts copies from earlier stages only/,
    );
    assert.match(
      lintEdited((s) =>
        s.replace(
          "COPY --from=builder /workspace/dist ./dist",
          "COPY --from=builder --chown=65532 /workspace/dist ./dist",
        ),
      ),
      /COPY --chown: hack\/build-image\.ts does not support it/,
    );
    assert.match(
      lintEdited(beforeUser("COPY --from=deps /workspace/node_modules/.package-lock.json ./")),
      /COPY --from=deps \/workspace\/node_modules\/\.package-lock\.json: hack\/build-image\.ts cannot tell what that is/,
    );
    assert.match(lintEdited(beforeUser("COPY api/*.ts ./api/")), /does not expand wildcards/);
  });

  it("fails when the stages the final one copies from do what the builder does not", () => {
    const deps = lintEdited((s) =>
      s.replace(
        "npm ci --omit=dev --ignore-scripts --no-audit --no-fund &&",
        "npm ci --omit=dev --ignore-scripts --no-audit --no-fund && rm -rf node_modules/zod/v3 &&",
      ),
    );
    assert.match(deps, /RUN rm -rf node_modules\/zod\/v3: hack\/build-image\.ts runs only the stage's npm ci/);
    const builder = lintEdited((s) =>
      s.replace(/^(RUN node node_modules\/typescript\/bin\/tsc .*)$/m, "$1\nRUN node scripts/minify.js dist"),
    );
    assert.match(
      builder,
      /RUN node scripts\/minify\.js dist in stage builder: hack\/build-image\.ts takes dist\/ from `make build`/,
    );
  });

  it("fails on an entrypoint, user or base the builder cannot provide", () => {
    assert.match(
      lintEdited((s) => s.replace(/^ENTRYPOINT .*$/m, "ENTRYPOINT node dist/cmd/main.js")),
      /the shell form needs \/bin\/sh, which hack\/build-image\.ts does not install/,
    );
    assert.match(
      lintEdited((s) => s.replace(/^USER .*$/m, "USER nonroot")),
      /USER nonroot: hack\/build-image\.ts needs a numeric uid/,
    );
    assert.match(
      lintEdited((s) => s.replace(/^FROM \$\{NODE_IMAGE\}$/m, "FROM deps")),
      /FROM deps: hack\/build-image\.ts builds the final stage on Node alone/,
    );
  });
});
