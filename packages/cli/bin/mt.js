#!/usr/bin/env node
// The `mt` executable: a thin launcher for the compiled CLI in ../dist.
import { main } from '../dist/main.js';

await main(process.argv);
