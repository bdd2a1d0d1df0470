/** Entry point of the admin console bundle (scripts/build-console.mjs). */
import './console.css';

import { render } from 'preact';

import { App } from './app';

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  render(<App />, root);
}
