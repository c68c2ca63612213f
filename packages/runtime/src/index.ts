export { exitOnSignals, type ShutdownLog } from './shutdown';
export { LogCapture } from './log-capture';
