"""Run cleanlab's CROWDLAB (get_label_quality_multiannotator) on an exported
labels matrix (items x annotators, empty = not labelled) and pred_probs.

Usage: python3 cleanlab_multiannotator.py labels.csv pred_probs.csv out.csv
Needs cleanlab on PYTHONPATH (benchmark only; never a package dependency).
Writes item, consensus_label, consensus_quality_score and the seconds taken."""
import sys
import time

import numpy as np
import pandas as pd
from cleanlab.multiannotator import get_label_quality_multiannotator

labels = pd.read_csv(sys.argv[1])
probs = pd.read_csv(sys.argv[2]).to_numpy()
t0 = time.time()
res = get_label_quality_multiannotator(labels, probs, verbose=False)
secs = time.time() - t0
lq = res["label_quality"]
out = pd.DataFrame({"item": np.arange(1, len(lq) + 1),
                    "consensus_label": lq["consensus_label"].to_numpy(),
                    "consensus_quality_score": lq["consensus_quality_score"].to_numpy(),
                    "seconds": secs})
out.to_csv(sys.argv[3], index=False)
