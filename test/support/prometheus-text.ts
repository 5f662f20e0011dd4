/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

/**
 * Parses the Prometheus text format (version 0.0.4) strictly enough for tests: comments and
 * blank lines skipped, label values unescaped; a line that is not a sample throws, so a
 * malformed exposition fails the test.
 *
 * @example
 * ```ts
 * const samples = parsePrometheusText('a_total{pool="x"} 3\n');
 * sampleValue(samples, "a_total", { pool: "x" }); // 3
 * ```
 */
export function parsePrometheusText(text: string): PromSample[] {
  const samples: PromSample[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.startsWith("#")) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`Not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const body = match[2] ?? "";
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let label = LABEL.exec(body); label; label = LABEL.exec(body)) {
      labels[label[1] as string] = (label[2] as string).replace(/\\(["\\n])/g, (_, c: string) =>
        c === "n" ? "\n" : c,
      );
      consumed = LABEL.lastIndex;
    }
    if (consumed !== body.length) throw new Error(`Bad labels in ${JSON.stringify(line)}`);
    const raw = match[3] as string;
    // Prometheus reads values with Go's ParseFloat, which takes Inf and NaN in any letter case
    // (prom-client writes an event-loop lag it has not measured yet as "Nan").
    const special = raw.toLowerCase();
    const value =
      special === "+inf" || special === "inf"
        ? Infinity
        : special === "-inf"
          ? -Infinity
          : Number(raw);
    if (Number.isNaN(value) && special !== "nan")
      throw new Error(`Bad value in ${JSON.stringify(line)}`);
    samples.push({ name: match[1] as string, labels, value });
  }
  return samples;
}

/** The value of the one sample with this name and exactly these labels; undefined if none. */
export function sampleValue(
  samples: readonly PromSample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return samples.find(
    (sample) =>
      sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted,
  )?.value;
}
