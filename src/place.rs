//! The page's places and their addresses. The lab is a few places a person can name (draw,
//! train, the runs, the experiments, their own handwriting), each with an address in the
//! URL's fragment (`#train`, `#experiments/heads-matter`, `#draw/lens`): a fragment works
//! under any sub-path a static host serves the page from, is never sent to the server (the
//! service worker answers the same file offline), and leaves the query, where an experiment
//! link keeps its plan and view, as it is. Pure: the page hands in the fragment.

/// A place of the page, in the order the navigation bar shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Place {
    /// The pad, the prediction, where it looks, and the story of the ViT reading the drawing.
    #[default]
    Draw,
    /// The plan, the run's progress, its charts and attention as it learns.
    Train,
    /// Every run kept in this browser: compare, continue, use, replay.
    Runs,
    /// The analyses that go deeper: beyond rollout, patches hidden, which heads matter,
    /// inside the model, ViT against CNN.
    Experiments,
    /// The person's own digits, and the model fine-tuned on them.
    Handwriting,
}

impl Place {
    pub const ALL: [Place; 5] = [
        Place::Draw,
        Place::Train,
        Place::Runs,
        Place::Experiments,
        Place::Handwriting,
    ];

    /// As the address spells it.
    pub fn slug(self) -> &'static str {
        match self {
            Self::Draw => "draw",
            Self::Train => "train",
            Self::Runs => "runs",
            Self::Experiments => "experiments",
            Self::Handwriting => "handwriting",
        }
    }

    /// As the navigation bar names it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Draw => "Draw",
            Self::Train => "Train",
            Self::Runs => "Runs",
            Self::Experiments => "Experiments",
            Self::Handwriting => "Handwriting",
        }
    }

    /// The one sentence a place opens with: what a person can do there.
    pub fn lead(self) -> &'static str {
        match self {
            Self::Draw => {
                "Draw a digit: the ViT reads it as you draw, and below, step by step, you can follow how."
            }
            Self::Train => {
                "Train a ViT on MNIST in this tab: pick a plan, press Train, and watch it learn."
            }
            Self::Runs => {
                "Every run trained in this browser: compare their curves, continue one, or draw with its weights."
            }
            Self::Experiments => {
                "Go deeper on your drawing: what the model relies on, what hiding patches or heads does, and the paper's Fig. 7."
            }
            Self::Handwriting => {
                "Keep your own digits, see what the model reads in each, and fine-tune it on them."
            }
        }
    }

    fn from_slug(slug: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|place| place.slug() == slug)
    }
}

/// A part of a place a link can bring into view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// A step of the story, under the pad.
    Story(StoryStep),
    BeyondRollout,
    PatchesHidden,
    HeadsMatter,
    InsideTheModel,
    VitAgainstCnn,
    /// "Learn my handwriting", under the set.
    LearnMyHandwriting,
}

impl Part {
    const ALL: [Part; 14] = [
        Part::Story(StoryStep::Input),
        Part::Story(StoryStep::Patches),
        Part::Story(StoryStep::Tokens),
        Part::Story(StoryStep::Positions),
        Part::Story(StoryStep::ClassToken),
        Part::Story(StoryStep::Attention),
        Part::Story(StoryStep::Lens),
        Part::Story(StoryStep::Head),
        Part::BeyondRollout,
        Part::PatchesHidden,
        Part::HeadsMatter,
        Part::InsideTheModel,
        Part::VitAgainstCnn,
        Part::LearnMyHandwriting,
    ];

    /// The place the part is in.
    pub fn place(self) -> Place {
        match self {
            Self::Story(_) => Place::Draw,
            Self::BeyondRollout
            | Self::PatchesHidden
            | Self::HeadsMatter
            | Self::InsideTheModel
            | Self::VitAgainstCnn => Place::Experiments,
            Self::LearnMyHandwriting => Place::Handwriting,
        }
    }

    /// The id of the element a link to the part brings into view: the story's card for a
    /// step of it, else the part's own.
    pub fn element_id(self) -> &'static str {
        match self {
            Self::Story(_) => "story",
            part => part.slug(),
        }
    }

    /// As the address spells it, after its place's.
    pub fn slug(self) -> &'static str {
        match self {
            Self::Story(step) => step.slug(),
            Self::BeyondRollout => "beyond-rollout",
            Self::PatchesHidden => "patches-hidden",
            Self::HeadsMatter => "heads-matter",
            Self::InsideTheModel => "inside",
            Self::VitAgainstCnn => "vit-vs-cnn",
            Self::LearnMyHandwriting => "learn",
        }
    }

    /// The experiments, in the order their place shows them.
    pub const EXPERIMENTS: [Part; 5] = [
        Part::BeyondRollout,
        Part::PatchesHidden,
        Part::HeadsMatter,
        Part::InsideTheModel,
        Part::VitAgainstCnn,
    ];

    /// As a contents line names it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Story(step) => step.title(),
            Self::BeyondRollout => "Beyond rollout",
            Self::PatchesHidden => "Patches hidden",
            Self::HeadsMatter => "Which heads matter",
            Self::InsideTheModel => "Inside the model",
            Self::VitAgainstCnn => "ViT against CNN",
            Self::LearnMyHandwriting => "Learn my handwriting",
        }
    }
}

/// The steps of "how the ViT reads your digit", the paper's path in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum StoryStep {
    /// The 28×28 input, as the pad's centring and scaling made it.
    #[default]
    Input,
    /// Cut into patches.
    Patches,
    /// Each patch flattened and projected into a token.
    Tokens,
    /// The position embedding added.
    Positions,
    /// The class token joins.
    ClassToken,
    /// Attention, layer by layer, and rollout building up.
    Attention,
    /// The class token read after each block.
    Lens,
    /// The head and the softmax.
    Head,
}

impl StoryStep {
    pub const ALL: [StoryStep; 8] = [
        StoryStep::Input,
        StoryStep::Patches,
        StoryStep::Tokens,
        StoryStep::Positions,
        StoryStep::ClassToken,
        StoryStep::Attention,
        StoryStep::Lens,
        StoryStep::Head,
    ];

    /// Counted from 1.
    pub fn number(self) -> usize {
        Self::ALL.iter().position(|&s| s == self).unwrap_or(0) + 1
    }

    pub fn slug(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Patches => "patches",
            Self::Tokens => "tokens",
            Self::Positions => "positions",
            Self::ClassToken => "class-token",
            Self::Attention => "attention",
            Self::Lens => "lens",
            Self::Head => "head",
        }
    }

    /// The step's short title, as the story's overview names it.
    pub fn title(self) -> &'static str {
        match self {
            Self::Input => "Input",
            Self::Patches => "Patches",
            Self::Tokens => "Tokens",
            Self::Positions => "Positions",
            Self::ClassToken => "Class token",
            Self::Attention => "Attention",
            Self::Lens => "Logit lens",
            Self::Head => "Prediction",
        }
    }

    /// The step after this one (the last stays).
    pub fn next(self) -> Self {
        Self::ALL[self.number().min(Self::ALL.len() - 1)]
    }

    /// The step before this one (the first stays).
    pub fn previous(self) -> Self {
        Self::ALL[self.number().saturating_sub(2)]
    }
}

/// Where the page is: a place, and a part of it to bring into view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Address {
    pub place: Place,
    pub part: Option<Part>,
}

/// Characters of a fragment read at most: an address is a few words.
const MAX_FRAGMENT: usize = 64;

impl Address {
    pub fn of(place: Place) -> Self {
        Self { place, part: None }
    }

    pub fn part(part: Part) -> Self {
        Self {
            place: part.place(),
            part: Some(part),
        }
    }

    /// Reads a URL's fragment (with or without its `#`). What names no place (an empty
    /// fragment, an anchor of another use, anything too long) is the first place; a part
    /// that is not of its place is dropped.
    pub fn read(fragment: &str) -> Self {
        let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
        if fragment.len() > MAX_FRAGMENT {
            return Self::default();
        }
        let mut words = fragment.splitn(2, '/');
        let Some(place) = words.next().and_then(Place::from_slug) else {
            return Self::default();
        };
        let part = words.next().and_then(|slug| {
            Part::ALL
                .into_iter()
                .find(|part| part.place() == place && part.slug() == slug)
        });
        Self { place, part }
    }

    /// The fragment that reads back as this address, with its `#`.
    pub fn fragment(self) -> String {
        match self.part {
            Some(part) => format!("#{}/{}", self.place.slug(), part.slug()),
            None => format!("#{}", self.place.slug()),
        }
    }
}
