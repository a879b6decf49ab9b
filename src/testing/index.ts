export {
  simulate,
  accept,
  decline,
  cancel,
  sampled,
  roots,
  type Answers,
  type ScriptedAnswer,
  type SimulateOptions,
  type Simulation,
  type SimulatedRound,
} from "./simulate.js";
