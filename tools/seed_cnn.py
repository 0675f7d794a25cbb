"""The reference PyTorch CNN that vitlab's `model::ConvNet` reproduces: the small
convolutional network the ViT paper argues against, at the seed ViT's size (204,330
parameters against 204,810).

Its `state_dict` names (`convs.0.weight`, …, `fc.weight`, `head.weight`) are the names vitlab
reads and writes for a CNN, laid out as PyTorch lays them out.
"""

import torch.nn as nn
import torch.nn.functional as F


class CNN(nn.Module):
    def __init__(self, image_size=28, channels=1, widths=(32, 64, 128), kernel_size=3,
                 hidden=96, dropout=0.25, num_classes=10):
        super().__init__()
        inputs = (channels, *widths[:-1])
        self.convs = nn.ModuleList(
            nn.Conv2d(i, o, kernel_size, padding=kernel_size // 2) for i, o in zip(inputs, widths)
        )
        side = image_size
        for _ in widths:
            side //= 2
        self.fc = nn.Linear(widths[-1] * side * side, hidden)
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x):
        for conv in self.convs:
            # ReLU and max pool commute; vitlab pools first (less work for ReLU).
            x = F.relu(F.max_pool2d(conv(x), 2))
        x = self.dropout(F.relu(self.fc(x.flatten(1))))
        return self.head(x)


def from_config(config):
    """The CNN of a vitlab config's `cnn` object (the file's `vitlab.config` metadata)."""
    return CNN(
        image_size=config.get("image_size", 28),
        channels=config.get("channels", 1),
        widths=tuple(config.get("widths", (32, 64, 128))),
        kernel_size=config.get("kernel_size", 3),
        hidden=config.get("hidden", 96),
        dropout=config.get("dropout", 0.25),
        num_classes=config.get("num_classes", 10),
    )
