/**
 * Subcommand registry. Each command module exports `register(program)`; add one line here per module.
 */
import { Command } from 'commander';
import * as sidecar from './sidecar';
import * as config from './config';
import * as yarnSim from './yarn-sim';

type Register = (program: Command) => void;

const modules: Register[] = [
  sidecar.register,
  config.register,
  yarnSim.register,
  // sidecar, yarn-sim and admin commands add themselves here
];

export function registerCommands(program: Command): void {
  for (const register of modules) register(program);
}
