"""The adapter protocol ``sessionspec-adapter/1``: its names (protocol), the operation language decoded into the
model's script types (decode), the model behind it (session, stateless_ops), the server loop and its two clients
(driver), what an adapter declares it supports (capabilities), and ``sessionspec serve-model`` (serve_model)."""
