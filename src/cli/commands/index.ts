/**
 * Subcommand registry. Each command module exports `register(program)`; add one line here per module.
 */
import { Command } from 'commander';
import * as list from './list';
import * as show from './show';
import * as block from './block';
import * as unblock from './unblock';
import * as importCmd from './import';
import * as exportCmd from './export';
import * as expire from './expire';
import * as status from './status';
import * as completion from './completion';
import * as sidecar from './sidecar';
import * as config from './config';
import * as quickstart from './quickstart';
import * as demo from './demo';
import * as yarnSim from './yarn-sim';
import * as detector from './detector';
import * as version from './version';

type Register = (program: Command) => void;

const modules: Register[] = [
  sidecar.register,
  config.register,
  quickstart.register,
  demo.register,
  yarnSim.register,
  list.register,
  show.register,
  block.register,
  unblock.register,
  importCmd.register,
  exportCmd.register,
  expire.register,
  status.register,
  detector.register,
  completion.register,
  version.register,
  // sidecar, yarn-sim and admin commands add themselves here
];

export function registerCommands(program: Command): void {
  for (const register of modules) register(program);
}
