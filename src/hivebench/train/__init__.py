"""Training the Waggle local law (the paper's training appendix): decision distillation of teacher
records into a LoRA adapter on a causal LM. Imported only by the jobs that train: it needs torch,
transformers and peft, which parsing the Snakefile never imports."""
