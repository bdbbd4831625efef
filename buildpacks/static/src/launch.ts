import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';
import { serverPlan, type StaticDecision } from './server.ts';

runLaunch((env) => serverPlan(readDecision<StaticDecision>(), env, process.cwd()));
