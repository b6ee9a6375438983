"""Why torch.use_deterministic_algorithms(True) makes encore capture graphs that never replay (issue 28).

ResNet-18, batch 1, eval, 60 iterations; run under encore with ENCORE_LOG. Argument: det|nodet.
"""
import sys
import torch
import torchvision

det = sys.argv[1] == "det"
torch.use_deterministic_algorithms(det)
torch.backends.cudnn.deterministic = True
torch.manual_seed(0)
model = torchvision.models.resnet18(weights=None).cuda().eval()
img = torch.randn(1, 3, 224, 224, device="cuda")
with torch.no_grad():
    for it in range(60):
        y = model(img)
        torch.cuda.synchronize()
print("done", float(y.sum()))
