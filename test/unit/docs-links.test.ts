// Every relative link in README.md and docs/**/*.md leads somewhere: the file (or directory) exists and, for
// `page.md#anchor` or `#anchor`, the page has a heading with that anchor under GitHub's rules. And the index,
// docs/README.md, lists every page of docs/.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, normalize, relative, resolve } from "node:path";
import { describe, it } from "node:test";
import { anchors, docFiles, links, read, slug } from "../markdown.ts";

const root = resolve(import.meta.dirname, "..", "..");

describe("links in README.md and docs/", () => {
  it("anchors follow GitHub's rules", () => {
    assert.equal(slug("Hashed schedules (`H`)"), "hashed-schedules-h");
    assert.equal(slug("The kubectl plugin (`kubectl cron`)"), "the-kubectl-plugin-kubectl-cron");
    assert.equal(slug('Troubleshooting: "my CronJob did not run"'), "troubleshooting-my-cronjob-did-not-run");
    assert.equal(slug("The one-file installer: `dist/install.yaml`"), "the-one-file-installer-distinstallyaml");
    assert.equal(
      slug("Missed runs, stopping after failures, and backfill"),
      "missed-runs-stopping-after-failures-and-backfill",
    );
    assert.equal(slug("snake_case and a [link](x.md)"), "snake_case-and-a-link");
    assert.deepEqual([...anchors("# A\n\n## A\n\n```sh\n# not a heading\n```\n\n### A\n")], ["a", "a-1", "a-2"]);
  });

  it("every relative link resolves to a file, and every #anchor to a heading of its page", () => {
    const bad: string[] = [];
    let checked = 0;
    for (const file of docFiles(root, { generated: true })) {
      for (const { line, target } of links(read(root, file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        checked++;
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const to = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        const where = `${file}:${line}: ${target}`;
        if (relative(root, resolve(root, to)).startsWith("..")) {
          bad.push(`${where}: leaves the repository`);
          continue;
        }
        if (!existsSync(join(root, to))) {
          bad.push(`${where}: ${to} does not exist`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!to.endsWith(".md")) {
          bad.push(`${where}: an anchor into a file that is not Markdown`);
          continue;
        }
        const known = anchors(read(root, to));
        if (!known.has(anchor)) bad.push(`${where}: ${to} has no heading #${anchor} (${[...known].join(", ")})`);
      }
    }
    assert.ok(checked >= 100, `only ${checked} relative links found`);
    assert.deepEqual(bad, []);
  });

  it("the index docs/README.md links every page of docs/, and the README links the index", () => {
    const index = new Set(links(read(root, "docs/README.md")).map((l) => l.target.split("#")[0]));
    const pages = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md");
    assert.deepEqual(
      pages.filter((p) => !index.has(p)),
      [],
      "pages of docs/ the index does not list",
    );
    for (const dir of ["runbooks", "reference"]) {
      assert.ok(
        [...index].some((t) => t?.startsWith(`${dir}/`)),
        `the index does not link docs/${dir}/`,
      );
    }
    assert.ok(
      links(read(root, "README.md")).some((l) => l.target === "docs/README.md"),
      "the README links docs/README.md",
    );
  });
});
