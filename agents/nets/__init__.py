"""Trained networks at play time, without torch's training stack: the numpy runtime of the shipped
policies and ``ppo:PATH`` (``policy``), ONNX (``onnx_agent``), and the per-action features both
share with the trainer's network (``action_features``)."""
