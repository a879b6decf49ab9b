export {
  simulate,
  accept,
  decline,
  cancel,
  sampled,
  roots,
  type Answers,
  type AnswerValue,
  type InputOf,
  type ResultOf,
  type StructuredOf,
  type ScriptedAnswer,
  type SimulateOptions,
  type Simulation,
  type SimulatedRound,
  type SimulatedError,
  type SimulatedPaths,
  SimulatedAuthorError,
} from "./simulate.js";
export { signalTimeout, noAnswer, type ScriptedSignals, type SimulatedTask } from "./simulate-task.js";
export { replayFixtures, type FixtureReport, type FixtureVerdict } from "./replay-fixtures.js";
