/** Objects kept for the life of the process, only for their hidden classes. */
const anchors: object[] = [];

/**
 * Keeps `instance` alive for good, so that V8 keeps its hidden class. V8 drops a hidden class
 * once no object has it, and with it the optimised code built on it: objects that all die
 * between bursts (callers, holds) would otherwise cost a round of deoptimisation and
 * recompilation at every burst after an idle moment. Anchor one instance built the way the
 * live ones are, with fields that hold the same kinds of values.
 *
 * @example
 * ```ts
 * anchorShape(new Caller(ignore, undefined, undefined));
 * ```
 */
export function anchorShape(instance: object): void {
  anchors.push(instance);
}
