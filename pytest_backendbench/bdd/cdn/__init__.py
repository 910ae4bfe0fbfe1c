"""The offline CDN: well-known CDN hosts answered from npm packages cached on this machine."""
