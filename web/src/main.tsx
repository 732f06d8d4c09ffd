/** @module Entry of the pages: one shell for `/`, `/receipts/:id` and `/agents/:id`, routed on the path. */
import { render } from 'preact';
import { AgentPage } from './agent-page.js';
import { readSite } from './api.js';
import { Playground } from './playground.js';
import { ReceiptPage } from './receipt-page.js';
import './styles.css';

function NotFound() {
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        <a href="/">Go to the playground</a>
      </p>
    </main>
  );
}

function route() {
  const site = readSite();
  const path = location.pathname.replace(/\/+$/, '') || '/';
  const seg = (prefix: string) => {
    try {
      return decodeURIComponent(path.slice(prefix.length));
    } catch {
      return path.slice(prefix.length);
    }
  };
  if (path === '/') {
    document.title = `${site.serviceName}: verify agent output`;
    return <Playground site={site} />;
  }
  if (path.startsWith('/receipts/')) {
    document.title = `Receipt ${seg('/receipts/')} · ${site.serviceName}`;
    return <ReceiptPage id={seg('/receipts/')} />;
  }
  if (path.startsWith('/agents/')) {
    document.title = `Agent ${seg('/agents/')} · ${site.serviceName}`;
    return <AgentPage id={seg('/agents/')} site={site} />;
  }
  return <NotFound />;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(route(), root);
}
