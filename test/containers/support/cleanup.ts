import "./engine";

// Every container the suite starts carries LABEL=<pid of the jest process>. A topology removes its own and
// its network at teardown; what a run that was killed left behind (its pid gone) is removed by the sweep
// before the next topology starts, and by `npm test` once jest has ended.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sweeper = require("../../../infra/containers/sweep.cjs") as { LABEL: string; sweep(): Promise<number> };

export const LABEL = sweeper.LABEL;
export const harnessLabels = { [LABEL]: String(process.pid) };
export const removeLeftovers = (): Promise<number> => sweeper.sweep();
