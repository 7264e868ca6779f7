"""The one episode loop every suite runs on: tasks, policies and media meet here."""
