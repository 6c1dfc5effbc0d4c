// Types for scripts/dockerfile.mjs, which the deploy tests import.
export interface DockerInstruction {
  op: string;
  args: string;
}
export interface DockerStage {
  from: string;
  name: string | undefined;
  instructions: DockerInstruction[];
}
export function dockerInstructions(text: string): DockerInstruction[];
export function dockerStages(instructions: DockerInstruction[]): DockerStage[];
export function dockerCommand(args: string): string[];
export function dockerCopy(args: string): {
  from: string | undefined;
  sources: string[];
  dest: string;
};
export function dockerEnv(args: string): Record<string, string>;
